// SPDX-License-Identifier: GPL-2.0
/*
 * finish.c - the end of both exports in one place (export.h): their files put
 * together, then named, the trace.dat's first, and none left when a step fails.
 */
#include <stddef.h>

#include "export.h"

int exp_commit(struct ks_export *ks, struct pf_export *pf, struct hg_err *err)
{
	if (ks && ks_commit(ks, err)) {		/* frees it */
		if (pf)		/* its file is whole but unnamed: none of it is left */
			pf_abort(pf);
		return -1;
	}
	return pf ? pf_commit(pf, err) : 0;
}

int exp_finish(struct ks_export *ks, struct ks_summary *ks_sum, struct pf_export *pf,
	       struct pf_summary *pf_sum, struct hg_err *err)
{
	/* the long steps, both, before either file is named */
	if ((ks && (ks_drain(ks, ks_sum, err) || ks_write(ks, err))) ||
	    (pf && (pf_drain(pf, pf_sum, err) || pf_write(pf, err)))) {
		if (ks)
			ks_abort(ks);
		if (pf)
			pf_abort(pf);
		return -1;
	}
	return exp_commit(ks, pf, err);
}
