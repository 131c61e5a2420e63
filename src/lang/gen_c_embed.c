/* The sensor description embedded in the program (docs/language.md, "Embedded
 * descriptions"): the generated source carries every file of the model (the main file,
 * then its imports) as an ELF note, owner "vigil", type CG_NOTE_MAIN or CG_NOTE_IMPORT,
 * whose descriptor is the file's name, a NUL, then its text. The linker gathers the notes
 * of every object into the program's .note.vigil section, where `vigil relations PROGRAM`,
 * `vigil watch -- PROGRAM` and `vigil ui --watch` find them (src/cli/embedded.c).
 *
 * Names: the main file by its base name (its default package is its name), an import as
 * the loader resolves it from there (relative to the main file's folder), so loading the
 * notes from memory finds the same files under the same names. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_io.h"
#include "lang/gen_c_internal.h"

#define MAX_EMBED (16u << 20) /* as the loader's largest file */

/* The name a file is embedded under (see above). */
static const char *embed_name(const char *main, const char *path, bool is_main)
{
	const char *slash = strrchr(main, '/');
	if (is_main)
		return slash ? slash + 1 : main;
	size_t dir = slash ? (size_t)(slash - main) + 1 : 0;
	return dir && !strncmp(path, main, dir) ? path + dir : path;
}

int cg_embed(struct cgen *g)
{
	const struct vgl_model *m = g->m;
	FILE *c = g->c;
	if (!m->nfiles)
		return 0;
	fprintf(c, "\n/* The sensor description, embedded: vigil relations, watch and ui read it "
	           "from the\n * program (ELF notes \"vigil\" in .note.vigil; docs/language.md). "
	           "*/\n");
	for (size_t i = 0; i < m->nfiles; i++) {
		size_t len;
		char *text = vgb_read_file(m->files[i], MAX_EMBED, 0, &len);
		if (!text) {
			snprintf(g->err, g->errsize, "cannot read %s again to embed it: %s",
			         m->files[i], errno ? strerror(errno) : "too large");
			return -1;
		}
		const char *name = embed_name(m->files[0], m->files[i], i == 0);
		size_t desc = strlen(name) + 1 + len, padded = (desc + 3) & ~(size_t)3;
		fprintf(c,
		        "__attribute__((used, section(\".note.vigil\"), aligned(4))) static const "
		        "struct {\n\tunsigned int namesz, descsz, type;\n\tchar name[8];\n"
		        "\tchar desc[%zu];\n} %s__vgl_note_%zu = {6, %zu, %d, \"vigil\",\n",
		        padded, g->pkg, i, desc, i == 0 ? CG_NOTE_MAIN : CG_NOTE_IMPORT);
		/* The descriptor as string literals of at most 64 bytes each, NUL-padded. */
		cg_cstring(c, name, strlen(name) + 1);
		for (size_t k = 0; k < len; k += 64) {
			fputs("\n    ", c);
			cg_cstring(c, text + k, len - k < 64 ? len - k : 64);
		}
		fprintf(c, "};\n");
		free(text);
	}
	return 0;
}
