/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hg_json.h - a strict JSON parser (RFC 8259) for the documents our own
 * programs wrote and read back: hourglass's info section. Bounded: depth
 * at most 64, the text as long as the caller allows; invalid UTF-8 in a
 * string is an error, as are duplicate keys.
 */
#ifndef HG_JSON_H
#define HG_JSON_H

#include <stddef.h>
#include <stdint.h>
#include "hg_err.h"

enum jv_type { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };

struct jv;

/* jv_parse - the document in @text; NULL and @err (with the byte offset) when it is not JSON */
struct jv *jv_parse(const char *text, size_t len, struct hg_err *err);
void jv_free(struct jv *v);

enum jv_type jv_type(const struct jv *v);
const struct jv *jv_get(const struct jv *obj, const char *key);	/* NULL: absent or @obj not an object */
size_t jv_len(const struct jv *v);					/* items of an array or object */
const struct jv *jv_at(const struct jv *arr, size_t i);
const char *jv_key_at(const struct jv *obj, size_t i);
double jv_num(const struct jv *v);	/* JV_NUM only */
int jv_is_int(const struct jv *v);	/* a number with no fraction that fits int64 */
int64_t jv_int(const struct jv *v);
const char *jv_str(const struct jv *v);	/* JV_STR only, NUL-terminated */
int jv_bool(const struct jv *v);

#endif
