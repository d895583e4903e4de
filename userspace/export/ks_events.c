// SPDX-License-Identifier: GPL-2.0
/*
 * ks_events.c - the KernelShark export's event formats (ks_events.h).
 */
#include <stdio.h>

#include "export.h"
#include "ks_events.h"

#define INT(n)	{ "int", n, 4 }
#define U32(n)	{ "u32", n, 4 }
#define S64(n)	{ "s64", n, 8 }
#define U64(n)	{ "u64", n, 8 }
#define STR(n)	{ "__data_loc char[]", n, 4 }
#define COMM(n)	{ "char", n, 16 }
#define PID(n)	{ "pid_t", n, 4 }
#define N(a)	(sizeof(a) / sizeof((a)[0]))

static const struct td_field f_switch[] = {
	COMM("prev_comm"), PID("prev_pid"), INT("prev_prio"), { "long", "prev_state", 8 },
	COMM("next_comm"), PID("next_pid"), INT("next_prio"),
};
static const struct td_field f_wake[] = { COMM("comm"), PID("pid"), INT("prio"), INT("target_cpu") };
static const struct td_field f_migrate[] = {
	COMM("comm"), PID("pid"), INT("prio"), INT("orig_cpu"), INT("dest_cpu"),
};
static const struct td_field f_exit[] = { COMM("comm"), PID("pid"), INT("prio") };
static const struct td_field f_irq_entry[] = { INT("irq"), STR("name") };
static const struct td_field f_irq_exit[] = { INT("irq"), INT("ret") };
static const struct td_field f_softirq[] = { { "unsigned int", "vec", 4 } };
static const struct td_field f_vector[] = { INT("vector") };
static const struct td_field f_hrt_entry[] = { U64("hrtimer"), S64("now"), U64("function") };
static const struct td_field f_hrt_exit[] = { U64("hrtimer") };
static const struct td_field f_nmi[] = { U64("handler"), S64("delta_ns"), INT("handled") };
static const struct td_field f_iv_start[] = { U32("thread") };
static const struct td_field f_iv_end[] = { U32("thread"), U64("duration_ns"), STR("ended_by") };
static const struct td_field f_gap[] = {
	U32("thread"), INT("next_thread"), U64("length_ns"), INT("agree"),
	STR("inferred"), STR("actual"), STR("cause"),
};
static const struct td_field f_release[] = { U32("thread"), U64("deadline_ns") };
static const struct td_field f_done[] = { U32("thread"), U64("response_ns") };
static const struct td_field f_miss[] = { U32("thread") };
static const struct td_field f_wakeup[] = { U32("thread"), S64("lateness_ns"), STR("timer") };

const char *const ks_hourglass_events[KS_HOURGLASS_NEVENTS] = {
	"hourglass/interval_start", "hourglass/interval_end", "hourglass/gap", "hourglass/job_release",
	"hourglass/job_done", "hourglass/deadline_miss", "hourglass/wakeup",
};

#define EV(sys, name, f, fmt, ev) \
	do { if (td_event(w, sys, name, f, N(f), fmt, ev, err)) return -1; } while (0)

int ks_events_declare(struct td_writer *w, struct ks_events *e, int *hg_buf, struct hg_err *err)
{
	int k;

	EV("sched", "sched_switch", f_switch,
	   "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%ld ==> next_comm=%s next_pid=%d "
	   "next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, REC->prev_state, "
	   "REC->next_comm, REC->next_pid, REC->next_prio", &e->sw);
#define WAKE_FMT "\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu"
	EV("sched", "sched_waking", f_wake, WAKE_FMT, &e->waking);
	EV("sched", "sched_wakeup", f_wake, WAKE_FMT, &e->wakeup);
	EV("sched", "sched_wakeup_new", f_wake, WAKE_FMT, &e->wakeup_new);
	EV("sched", "sched_migrate_task", f_migrate,
	   "\"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\", REC->comm, REC->pid, REC->prio, "
	   "REC->orig_cpu, REC->dest_cpu", &e->migrate);
	EV("sched", "sched_process_exit", f_exit,
	   "\"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio", &e->exit);
	EV("irq", "irq_handler_entry", f_irq_entry, "\"irq=%d name=%s\", REC->irq, __get_str(name)",
	   &e->irq_entry);
	EV("irq", "irq_handler_exit", f_irq_exit,
	   "\"irq=%d ret=%s\", REC->irq, REC->ret ? \"handled\" : \"unhandled\"", &e->irq_exit);
	EV("irq", "softirq_entry", f_softirq, "\"vec=%u\", REC->vec", &e->softirq_entry);
	EV("irq", "softirq_exit", f_softirq, "\"vec=%u\", REC->vec", &e->softirq_exit);
	for (k = 0; k < HGT_VEC_MAX; k++) {
		char name[64];

		snprintf(name, sizeof(name), "%s_entry", hgt_vec_name(k));
		EV("irq_vectors", name, f_vector, "\"vector=%d\", REC->vector", &e->vec_entry[k]);
		snprintf(name, sizeof(name), "%s_exit", hgt_vec_name(k));
		EV("irq_vectors", name, f_vector, "\"vector=%d\", REC->vector", &e->vec_exit[k]);
	}
	EV("timer", "hrtimer_expire_entry", f_hrt_entry,
	   "\"hrtimer=%p function=%ps now=%llu\", REC->hrtimer, REC->function, REC->now", &e->hrt_entry);
	EV("timer", "hrtimer_expire_exit", f_hrt_exit, "\"hrtimer=%p\", REC->hrtimer", &e->hrt_exit);
	EV("nmi", "nmi_handler", f_nmi,
	   "\"%ps() delta_ns: %lld handled: %d\", REC->handler, REC->delta_ns, REC->handled", &e->nmi);
	*hg_buf = td_buffer(w, "hourglass", err);
	if (*hg_buf < 0)
		return -1;
	EV("hourglass", "interval_start", f_iv_start, "\"thread=%u\", REC->thread", &e->iv_start);
	EV("hourglass", "interval_end", f_iv_end,
	   "\"thread=%u duration_ns=%llu ended_by=%s\", REC->thread, REC->duration_ns, __get_str(ended_by)",
	   &e->iv_end);
	EV("hourglass", "gap", f_gap,
	   "\"thread=%u next_thread=%d length_ns=%llu agree=%d inferred=%s actual=%s cause=%s\", "
	   "REC->thread, REC->next_thread, REC->length_ns, REC->agree, __get_str(inferred), "
	   "__get_str(actual), __get_str(cause)", &e->gap);
	EV("hourglass", "job_release", f_release, "\"thread=%u deadline_ns=%llu\", REC->thread, REC->deadline_ns",
	   &e->release);
	EV("hourglass", "job_done", f_done, "\"thread=%u response_ns=%llu\", REC->thread, REC->response_ns",
	   &e->done);
	EV("hourglass", "deadline_miss", f_miss, "\"thread=%u\", REC->thread", &e->miss);
	EV("hourglass", "wakeup", f_wakeup,
	   "\"thread=%u lateness_ns=%lld timer=%s\", REC->thread, REC->lateness_ns, __get_str(timer)",
	   &e->wake);
	return 0;
}
