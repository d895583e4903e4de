// SPDX-License-Identifier: GPL-2.0
/*
 * timers.c - sleep until a CLOCK_MONOTONIC time with the timer -i chose.
 *
 * NATIVE is the paper's usleep(): a relative sleep with the thread's default
 * timer slack (50 us for time-sharing threads). HR is today's high-resolution
 * timer used well: an absolute expiry and 1 ns of slack. TIMERFD and POSIX
 * arm an absolute one-shot timer and wait for it by read() and by signal.
 * RTC waits on the periodic interrupt of /dev/rtc0, so it wakes on a tick.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/rtc.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "timers.h"
#include "tsc.h"

static int rtc_open(struct hg_timer *tm, int hz, char *err, size_t errlen)
{
	static const char *const paths[] = { "/dev/rtc0", "/dev/rtc" };
	size_t i;

	tm->fd = -1;
	for (i = 0; i < 2 && tm->fd < 0; i++)
		tm->fd = open(paths[i], O_RDONLY | O_CLOEXEC);
	if (tm->fd < 0) {
		snprintf(err, errlen, "-i RTC needs /dev/rtc0 or /dev/rtc: %s%s", strerror(errno),
			 errno == ENOENT ? " (this machine has no real-time clock device; use -i HR)" :
			 errno == EBUSY ? " (another program holds the RTC)" : "");
		return -1;
	}
	if (ioctl(tm->fd, RTC_IRQP_SET, (unsigned long)hz) < 0) {
		snprintf(err, errlen, "-i RTC: cannot set the RTC to %d Hz: %s%s", hz, strerror(errno),
			 errno == EACCES ? " (rates above /sys/class/rtc/rtc0/max_user_freq need root)" : "");
		goto fail;
	}
	if (ioctl(tm->fd, RTC_PIE_ON, 0) < 0) {
		snprintf(err, errlen, "-i RTC: cannot turn on periodic interrupts: %s", strerror(errno));
		goto fail;
	}
	/* The kernel's RTC core times periodic interrupts with this period. */
	tm->tick_ns = 1000000000ULL / (uint64_t)hz;
	return 0;
fail:
	close(tm->fd);
	tm->fd = -1;
	return -1;
}

int hg_timer_open(struct hg_timer *tm, enum hg_timer_kind kind, int rtc_hz,
		  char *err, size_t errlen)
{
	memset(tm, 0, sizeof(*tm));
	tm->kind = kind;
	tm->fd = -1;
	switch (kind) {
	case HG_T_NATIVE:
		return 0;
	case HG_T_HR:
		/* slack 0 would mean "the default"; 1 ns is the least there is */
		if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0)) {
			snprintf(err, errlen, "-i HR: cannot set timer slack: %s", strerror(errno));
			return -1;
		}
		return 0;
	case HG_T_TIMERFD:
		tm->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (tm->fd < 0) {
			snprintf(err, errlen, "-i TIMERFD: timerfd_create: %s", strerror(errno));
			return -1;
		}
		return 0;
	case HG_T_POSIX: {
		struct sigevent sev = { 0 };

		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = HG_TIMER_SIGNAL;
		sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		if (timer_create(CLOCK_MONOTONIC, &sev, &tm->posix)) {
			snprintf(err, errlen, "-i POSIX: timer_create: %s", strerror(errno));
			return -1;
		}
		tm->posix_made = true;
		sigemptyset(&tm->sigs);
		sigaddset(&tm->sigs, HG_TIMER_SIGNAL);
		return 0;
	}
	case HG_T_RTC:
		return rtc_open(tm, rtc_hz, err, errlen);
	}
	snprintf(err, errlen, "unknown timer");
	return -1;
}

/*
 * rtc_sleep - wait for the RTC tick nearest @target; say when it was due.
 *
 * read() says that a tick came, not when. The kernel paces the ticks on an
 * exact grid; its phase is estimated as the earliest wake-up seen so far (a
 * wake-up before the estimated tick moves the grid earlier), so lateness is
 * measured against the fastest wake-up of the run up to then.
 */
/* stopping - a signal interrupted the wait because the run stops early */
static bool stopping(const struct hg_timer *tm)
{
	return tm->stop && atomic_load(tm->stop);
}

static int rtc_sleep(struct hg_timer *tm, uint64_t target, uint64_t *intended)
{
	unsigned long data;
	uint64_t now, k;

	if (!tm->have_phase) {
		while (read(tm->fd, &data, sizeof(data)) != sizeof(data)) {
			if (errno != EINTR)
				return -1;
			if (stopping(tm))
				return 1;
		}
		tm->phase_ns = hg_clock_ns(CLOCK_MONOTONIC);
		tm->have_phase = true;
	}
	if (target < tm->phase_ns)
		target = tm->phase_ns;
	k = (target - tm->phase_ns + tm->tick_ns / 2) / tm->tick_ns;
	*intended = tm->phase_ns + k * tm->tick_ns;
	for (;;) {
		if (read(tm->fd, &data, sizeof(data)) != sizeof(data)) {
			if (errno != EINTR)
				return -1;
			if (stopping(tm))
				return 1;
			continue;
		}
		now = hg_clock_ns(CLOCK_MONOTONIC);
		if (now + tm->tick_ns / 2 < *intended)
			continue;	/* an earlier tick */
		if (now < *intended) {
			/* earlier than the grid said: the grid was late */
			tm->phase_ns -= *intended - now;
			*intended = now;
		}
		return 0;
	}
}

/*
 * hg_timer_sleep_until - block until CLOCK_MONOTONIC reaches @target_ns.
 * @intended_ns is when the wake-up was due: @target_ns, or the RTC tick.
 */
int hg_timer_sleep_until(struct hg_timer *tm, uint64_t target_ns, uint64_t *intended_ns)
{
	struct timespec ts = hg_ns_ts(target_ns);
	uint64_t now, expirations;
	int r;

	*intended_ns = target_ns;
	switch (tm->kind) {
	case HG_T_NATIVE:
		now = hg_clock_ns(CLOCK_MONOTONIC);
		if (now >= target_ns)
			return 0;
		ts = hg_ns_ts(target_ns - now);
		while (nanosleep(&ts, &ts) && errno == EINTR)
			if (stopping(tm))
				return 1;
		return 0;
	case HG_T_HR:
		while ((r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR)
			if (stopping(tm))
				return 1;
		return r ? -1 : 0;
	case HG_T_TIMERFD: {
		struct itimerspec its = { .it_value = ts };

		if (timerfd_settime(tm->fd, TFD_TIMER_ABSTIME, &its, NULL))
			return -1;
		while (read(tm->fd, &expirations, sizeof(expirations)) < 0) {
			if (errno != EINTR)
				return -1;
			if (stopping(tm))
				return 1;
		}
		return 0;
	}
	case HG_T_POSIX: {
		struct itimerspec its = { .it_value = ts };

		if (timer_settime(tm->posix, TIMER_ABSTIME, &its, NULL))
			return -1;
		while (sigwaitinfo(&tm->sigs, NULL) < 0) {
			if (errno != EINTR)
				return -1;
			if (stopping(tm)) {
				struct itimerspec off = { 0 };

				timer_settime(tm->posix, 0, &off, NULL);
				return 1;
			}
		}
		return 0;
	}
	case HG_T_RTC:
		return rtc_sleep(tm, target_ns, intended_ns);
	}
	return -1;
}

/*
 * rtc_off - turn the periodic interrupt off, the calling (measuring) thread's
 * run being over. On PREEMPT_RT the RTC core's periodic hrtimer runs in
 * ktimers/N at SCHED_FIFO 1 and wakes the reader from inside its callback,
 * so a real-time reader on that CPU preempts the callback mid-way; RTC_PIE_OFF
 * then loops on hrtimer_try_to_cancel() until the callback is not running
 * (rtc_irq_set_state()), at our priority, above the callback it waits for:
 * the CPU never comes back (6.1-rt and 6.12-rt, LAT at RTHIGH pinned to a
 * CPU, 2026-11-27; the whole guest hung). As SCHED_OTHER we let ktimers
 * finish the callback first. Elsewhere the callback runs in hard interrupt
 * context and this costs nothing; nothing is measured after it.
 */
static void rtc_off(struct hg_timer *tm)
{
	struct sched_param other = { 0 };

	pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
	ioctl(tm->fd, RTC_PIE_OFF, 0);
}

void hg_timer_close(struct hg_timer *tm)
{
	if (tm->kind == HG_T_RTC && tm->fd >= 0)
		rtc_off(tm);
	if (tm->fd >= 0)
		close(tm->fd);
	if (tm->posix_made)
		timer_delete(tm->posix);
	tm->fd = -1;
	tm->posix_made = false;
}
