// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_import.c - hgtrace-import in process on any bytes as a trace.dat:
 * import_dat.c built into the target (main renamed hgimport_main), the
 * Debian libtracecmd, libtraceevent and libtracefs as they are.
 *
 * Those libraries crash on some corrupt files (they trust the sizes a file
 * declares). Such a crash is not ours, and the product turns it into exit
 * 3 naming the file; here it must not stop the fuzzing nor hide a crash of
 * ours. So this target's SIGSEGV/SIGBUS/SIGFPE handler asks the product's
 * own classifier, hgi_crash_in_library(): the first frame of the crash
 * that is not libc's, the loader's or the sanitizers' runtime decides.
 * Our code (import_dat.c and the library's writer) is compiled into a
 * section of its own (ours.h), so a frame there is ours even in an
 * executable that also holds the sanitizers. A crash in the libraries is
 * counted (printed at exit) and the target longjmps back, taking back what
 * our code held (fz_track), the descriptors and the file's mappings; the
 * libraries' own memory of that input is left behind. A crash in our code
 * goes on to the sanitizer's handler, which reports it as any crash. Bad
 * accesses the sanitizer sees in the libraries' calls into libc
 * (memcpy...) are theirs too: asan.supp suppresses them by library. The
 * libraries' free() of a pointer that the allocator does not own is caught
 * before the sanitizer reports it (on_free) and counted as their crash. The
 * libraries allocate what a file declares: run.sh caps every allocation
 * at 256 MiB, beyond which malloc() says no, as a real machine would, and
 * they must cope; our own code is held to 8 MiB (fz_track_limit).
 *
 * When the import succeeds, its output must be a .hgt that the one reader
 * accepts, strict, every record read: the importer never writes a file
 * that the merger would refuse.
 */
#include <execinfo.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <sanitizer/allocator_interface.h>
#include "fz.h"
#include "fz_track.h"
#include "hg_hgt.h"

int hgimport_main(int argc, char **argv);
int hgi_crash_in_library(const void *pc);

extern const char __start_hg_ours[], __stop_hg_ours[];

static sigjmp_buf back;
static volatile sig_atomic_t inside;
static struct sigaction old[3];
static const int sigs[3] = { SIGSEGV, SIGBUS, SIGFPE };
static unsigned long long lib_crashes, imported, refused;
static char in_path[512];

/*
 * on_free - every free() of the process, before the sanitizer checks it: a
 * pointer the allocator does not own, freed from inside the libraries
 * (libtraceevent frees garbage on some corrupt files), is their crash too.
 * The sanitizer would report it and stop; the product's glibc may abort or
 * go on. Counted and left the same way as a crash.
 */
static void on_free(const volatile void *p)
{
	if (inside && p && !__sanitizer_get_ownership((const void *)p) &&
	    hgi_crash_in_library(__builtin_return_address(0))) {
		inside = 0;
		lib_crashes++;
		siglongjmp(back, 1);
	}
}

static void on_malloc(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
}

int hg_fuzz_ours(const void *pc)
{
	return (const char *)pc >= __start_hg_ours && (const char *)pc < __stop_hg_ours;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	const void *pc = (const void *)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	int k;

	(void)si;
	if (inside && hgi_crash_in_library(pc)) {
		inside = 0;
		lib_crashes++;
		siglongjmp(back, 1);
	}
	/* ours, or outside an import: the sanitizer's handler, when the fault happens again */
	for (k = 0; k < 3; k++)
		if (sigs[k] == sig)
			sigaction(sig, &old[k], NULL);
}

static void tally(void)
{
	const char *to = getenv("FZ_TALLY");
	FILE *f = to ? fopen(to, "a") : NULL;

	fprintf(stderr, "fuzz_import: %llu imports written, %llu inputs refused, %llu crashes inside "
		"libtracecmd/libtraceevent caught (not ours)\n", imported, refused, lib_crashes);
	/* libFuzzer's -fork runs many processes: run.sh adds their lines up */
	if (f) {
		fprintf(f, "import %llu %llu %llu\n", imported, refused, lib_crashes);
		fclose(f);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sigaction sa;
	void *warm[4];
	int k;

	(void)argc;
	(void)argv;
	if ((uintptr_t)__stop_hg_ours <= (uintptr_t)__start_hg_ours) {
		fprintf(stderr, "fuzz_import: no hg_ours section: build with -include ours.h\n");
		abort();
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	for (k = 0; k < 3; k++)
		sigaction(sigs[k], &sa, &old[k]);
	backtrace(warm, 4);		/* the unwinder loaded before any crash needs it */
	__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
	/* ours: 64 KiB chunks, a 4 MiB table of pids, the CPUs' buffers: nothing near 8 MiB */
	fz_track_limit(8u << 20);
	atexit(tally);
	return 0;
}

/* unmap - the input's mappings a crashed libtracecmd left */
static void unmap_input(void)
{
	FILE *m = fopen("/proc/self/maps", "r");
	char line[1024];

	if (!m)
		return;
	while (fgets(line, sizeof(line), m)) {
		unsigned long lo, hi;
		char *path = strchr(line, '/');

		if (!path || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		path[strcspn(path, "\n")] = 0;
		if (!strcmp(path, in_path))
			munmap((void *)lo, hi - lo);
	}
	fclose(m);
}

/* check_output - what hgtrace-import wrote is a file the reader accepts, every record of it */
static void check_output(const char *out)
{
	struct hg_err err = { "", 0 };
	struct hgt_file *f;
	struct hgt_cursor *c;
	const struct hgt_rec *r;
	int rc;

	if (hgt_open(&f, out, 0, &err))
		fz_fail("hgtrace-import wrote a file the reader refuses: %s", err.msg);
	c = hgt_cursor_open(f, HGT_ALL_CPUS, &err);
	if (!c)
		fz_fail("%s", err.msg);
	while ((rc = hgt_cursor_next(c, &r, &err)) > 0)
		;
	if (rc < 0)
		fz_fail("hgtrace-import wrote a file whose records the reader refuses: %s", err.msg);
	hgt_cursor_close(c);
	hgt_close(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char out[512];
	char *argv[] = { "hgtrace-import", in_path, "-o", out, size % 2 ? "-z" : NULL, NULL };
	int argc = size % 2 ? 5 : 4, rc;
	size_t left;

	snprintf(in_path, sizeof(in_path), "%s", fz_file("trace.dat", data, size));
	snprintf(out, sizeof(out), "%s/kernel.hgt", fz_dir());
	unlink(out);
	fz_fd_mark();
	fz_track_begin();
	optind = 0;
	if (sigsetjmp(back, 1)) {
		fz_track_reap();
		fz_fd_reap();
		unmap_input();
		return -1;	/* not worth keeping: the library's crash, not a path of ours */
	}
	inside = 1;
	rc = hgimport_main(argc, argv);
	inside = 0;
	/* LeakSanitizer is off here (libtracecmd leaks on every file): ours must leave nothing */
	left = fz_track_reap();
	if (left)
		fz_fail("hgtrace-import returned %d and left %zu blocks of ours allocated", rc, left);
	fz_fd_reap();
	if (rc == 0) {
		imported++;
		check_output(out);
	} else if (rc == 3) {
		refused++;
		if (!access(out, F_OK))
			fz_fail("hgtrace-import refused the file but left %s", out);
	} else {
		fz_fail("hgtrace-import exit %d on a trace.dat of %zu bytes (2: out of memory, 4: a write error)",
			rc, size);
	}
	return 0;
}
