/* Partitioned spill files: the state of an operator past the query's memory budget
 * (VIGIL_QUERY_MEMORY) written out as fixed-size records, each to one of n partitions, and
 * read back partition by partition in the order written (exec_hash_spill.c: the Grace
 * hash join; exec_agg_spill.c: an aggregate's contributions by group).
 *
 * One file per set of partitions, never linked (O_TMPFILE; where the file system has
 * none, made in a private mkdtemp directory and unlinked with it at once), in the cache
 * directory (else $TMPDIR, else /tmp): it goes with its descriptor, whatever ends the
 * process, so nothing is left behind. Each partition's records are buffered (the
 * buffers taken from the budget) and written as chunks at the file's end, chained per
 * partition (one chunk grows while a partition is written alone: joined rows are written
 * partition after partition, so their chains stay short). A write that fails (a full disk) is one
 * line on stderr and the statement is refused as past the budget. */
#ifndef VIGIL_QUERY_EXEC_SPILL_PARTS_H
#define VIGIL_QUERY_EXEC_SPILL_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query/engine_internal.h"

struct vgq_parts {
	struct vgq_session *s;
	const char *what; /* the operator's state, for refusals ("the hash join's partitions") */
	int fd;
	size_t nparts, rec, bufrecs;
	unsigned char *buf; /* nparts * bufrecs * rec */
	size_t *fill;       /* records in each partition's buffer */
	struct vgq_chunk {
		uint64_t off;
		uint32_t n, next; /* records; the partition's next chunk + 1 (0: last) */
	} * chunks;
	size_t nchunks, capchunks;
	uint32_t *head, *tail; /* per partition: first and last chunk + 1 */
	uint64_t *count;       /* records per partition */
	uint64_t end;          /* bytes written */
	size_t charged;        /* buffer bytes taken from the budget */
	bool failed;
};

/* How many partitions: counts of rec-byte records per partition of the finest cut (the
 * hash's top VGQ_PARTS_FINE_LOG2 bits), and what a partition of n records holds in memory
 * (bytes(n, arg)). The log2 of the fewest partitions whose largest, with their buffers and
 * chain of chunks, fits half of `room`; when none does (skew: equal
 * keys cannot be split), the cut that holds least. *worst: what that cut holds; past
 * `room` the operator is refused. */
#define VGQ_PARTS_FINE_LOG2 12
unsigned vgq_parts_choose(const uint64_t *fine, size_t (*bytes)(uint64_t n, size_t arg), size_t arg,
                          size_t rec, size_t room, size_t *worst);

/* n partitions of rec-byte records, their buffers an eighth of the budget's room at most
 * (512 bytes and 4 records each at least); false when the buffers are past the budget or no file
 * can be made (the statement stops: refused as `what`, the file's own line first). */
bool vgq_parts_open(struct vgq_parts *pt, struct vgq_session *s, const char *what, size_t nparts,
                    size_t rec);
/* The bytes vgq_parts_open would take from the budget now. */
size_t vgq_parts_open_bytes(const struct vgq_session *s, size_t nparts, size_t rec);
/* Appends one record to partition p; false once a write failed (the statement stops). */
bool vgq_parts_put(struct vgq_parts *pt, size_t p, const void *record);
/* Writes what the buffers hold and frees them (reading needs none): false on failure. */
bool vgq_parts_seal(struct vgq_parts *pt);
/* The file and everything else freed. */
void vgq_parts_close(struct vgq_parts *pt);

/* Reads partition p's records in the order written, a chunk at a time (its buffer: one
 * chunk, vgq_parts_chunk_bytes, taken from the budget by the caller). */
struct vgq_parts_reader {
	const struct vgq_parts *pt;
	uint32_t chunk; /* the chunk being read + 1 (0: none left) */
	uint32_t done;  /* its records read into buf so far */
	unsigned char *buf;
	size_t n, i; /* records in buf, and the next to return */
};
size_t vgq_parts_chunk_bytes(const struct vgq_parts *pt);
void vgq_parts_reader_init(struct vgq_parts_reader *r, const struct vgq_parts *pt, size_t p);
/* The next record, or NULL at the partition's end or on a read error (pt->failed). */
const void *vgq_parts_next(struct vgq_parts_reader *r);
void vgq_parts_reader_free(struct vgq_parts_reader *r);
/* Partition p's records, all of them, into out (count[p] * rec bytes); false on error. */
bool vgq_parts_read_all(struct vgq_parts *pt, size_t p, void *out);

#endif
