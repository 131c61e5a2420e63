/* Reserved words of the language and of the languages code is generated for: a name
 * that is a keyword in C, Python or Java would not compile there, so it is refused here
 * once rather than mangled differently by each generator. */
#include "lang/names.h"

#include <string.h>

static const char *const vgl_words[] = {
    "package", "import", "const",  "entity", "struct",  "record", "sensor", "extends",
    "from",    "max",    "true",   "false",  "int8",    "int16",  "int32",  "int64",
    "uint8",   "uint16", "uint32", "uint64", "float64", "bool",   "string", "bytes",
};

static const char *const c_words[] = {
    "auto",     "break",  "case",     "char",   "continue", "default",  "do",
    "double",   "else",   "enum",     "extern", "float",    "for",      "goto",
    "if",       "inline", "int",      "long",   "register", "restrict", "return",
    "short",    "signed", "sizeof",   "static", "switch",   "typedef",  "union",
    "unsigned", "void",   "volatile", "while",  "_Bool",    "NULL",
};

static const char *const python_words[] = {
    "False",    "None", "True", "and",    "as",      "assert", "async", "await", "class",
    "def",      "del",  "elif", "except", "finally", "global", "in",    "is",    "lambda",
    "nonlocal", "not",  "or",   "pass",   "raise",   "try",    "with",  "yield", "self",
};

static const char *const java_words[] = {
    "abstract",   "boolean",    "byte",      "catch",  "extends",      "final",
    "implements", "instanceof", "interface", "native", "new",          "null",
    "private",    "protected",  "public",    "super",  "synchronized", "this",
    "throw",      "throws",     "transient", "var",    "assert",       "strictfp",
};

static bool in(const char *name, const char *const *words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, words[i]))
			return true;
	return false;
}

#define IN(name, words) in(name, words, sizeof words / sizeof *words)

const char *vgl_name_problem(const char *name)
{
	if (IN(name, vgl_words))
		return "a reserved word";
	if (name[0] == '_')
		return "reserved (names starting with '_' are for generated code)";
	if (IN(name, c_words))
		return "reserved in C";
	if (IN(name, python_words))
		return "reserved in Python";
	if (IN(name, java_words))
		return "reserved in Java";
	return NULL;
}

static const char *const type_names[] = {
    [VGL_INT8] = "int8",     [VGL_INT16] = "int16",   [VGL_INT32] = "int32",
    [VGL_INT64] = "int64",   [VGL_UINT8] = "uint8",   [VGL_UINT16] = "uint16",
    [VGL_UINT32] = "uint32", [VGL_UINT64] = "uint64", [VGL_FLOAT64] = "float64",
    [VGL_BOOL] = "bool",     [VGL_STRING] = "string", [VGL_BYTES] = "bytes",
    [VGL_ENTITY] = "entity", [VGL_STRUCT] = "struct",
};

bool vgl_primitive_type(const char *name, enum vgl_type *type)
{
	for (int t = VGL_INT8; t <= VGL_BYTES; t++)
		if (!strcmp(name, type_names[t])) {
			*type = (enum vgl_type)t;
			return true;
		}
	return false;
}

const char *vgl_type_name(enum vgl_type type)
{
	return type <= VGL_STRUCT ? type_names[type] : "?";
}

static const char *const op_names[] = {
    [VGL_OP_ACTIVITY] = "activity", [VGL_OP_CREATE] = "create",
    [VGL_OP_LOAD] = "load",         [VGL_OP_RECLAIM] = "reclaim",
    [VGL_OP_RENAME] = "rename",     [VGL_OP_ENTER] = "enter",
    [VGL_OP_LEAVE] = "leave",       [VGL_OP_ACQUIRE] = "acquire",
    [VGL_OP_RELEASE] = "release",   [VGL_OP_WAIT_BEGIN] = "wait_begin",
    [VGL_OP_WAIT_END] = "wait_end", [VGL_OP_SUSPEND] = "suspend",
    [VGL_OP_RESUME] = "resume",     [VGL_OP_REFERENCE] = "reference",
    [VGL_OP_MOVE] = "move",
};

const char *vgl_op_name(enum vgl_op op)
{
	return (unsigned)op < VGL_OP_COUNT ? op_names[op] : "?";
}

bool vgl_op_is_entity(enum vgl_op op)
{
	return op >= VGL_OP_CREATE && op <= VGL_OP_LEAVE;
}
