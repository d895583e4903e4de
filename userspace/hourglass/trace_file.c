// SPDX-License-Identifier: GPL-2.0
/*
 * trace_file.c - write the binary trace (hgl_trace.h): prelude, the JSON
 * summary, the records of each thread in time order, and the END marker.
 * The file is written under a temporary name and renamed when written, so
 * a crash never leaves a file that looks finished. A run interrupted by a
 * signal is written whole but without its END section: readers refuse it
 * unless asked to take an incomplete run, and info.interrupted says why.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "stats.h"

static int put_section(FILE *f, const char *tag, const void *data, uint64_t size)
{
	static const char zero[8];
	struct hgl_section s = { .size = size };

	memcpy(s.tag, tag, 4);
	if (fwrite(&s, sizeof(s), 1, f) != 1)
		return -1;
	if (size && fwrite(data, 1, size, f) != size)
		return -1;
	if (size % 8 && fwrite(zero, 1, 8 - size % 8, f) != 8 - size % 8)
		return -1;
	return 0;
}

int hg_write_trace(struct hg_run *run, struct hg_stats *st, const char *path)
{
	struct hgl_prelude pre = { .major = HGL_FORMAT_MAJOR, .minor = HGL_FORMAT_MINOR };
	struct hgl_end end = { 0 };
	struct hgl_section recs = { .size = st->nrecs * sizeof(struct hgl_rec) };
	char *info = NULL, *tmp;
	size_t info_len = 0;
	FILE *f, *mem;
	uint64_t i, used = atomic_load(&run->pool_used);
	int k, err = 0;

	mem = open_memstream(&info, &info_len);
	if (!mem)
		return -1;
	hg_write_json(run, st, mem);
	fclose(mem);

	if (asprintf(&tmp, "%s.partial", path) < 0) {
		free(info);
		return -1;
	}
	f = fopen(tmp, "wb");
	if (!f) {
		err = errno;
		goto out;
	}
	memcpy(pre.magic, HGL_MAGIC, 8);
	memcpy(recs.tag, "recs", 4);
	if (used > run->pool_cap)
		used = run->pool_cap;
	if (fwrite(&pre, sizeof(pre), 1, f) != 1 || put_section(f, "info", info, info_len) ||
	    fwrite(&recs, sizeof(recs), 1, f) != 1) {
		err = errno;
		goto close;
	}
	/* used (non-zero type) records only: chunk tails are left out */
	for (i = 0; i < used; i++) {
		if (!run->pool[i].type)
			continue;
		if (fwrite(&run->pool[i], sizeof(struct hgl_rec), 1, f) != 1) {
			err = errno;
			goto close;
		}
	}
	end.nr_records = st->nrecs;
	for (k = 0; k < run->cfg->nthreads; k++)
		end.dropped += run->th[k].dropped;
	/* interrupted: everything measured is here, but no END: the format's "incomplete" */
	if (!run->stop_signal && put_section(f, "end!", &end, sizeof(end)))
		err = errno;
close:
	if (fclose(f) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err)
		unlink(tmp);
out:
	free(tmp);
	free(info);
	errno = err;
	return err ? -1 : 0;
}
