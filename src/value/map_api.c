/* map_api.c - the public map functions of stc.h over value/map.h. */
#include <assert.h>

#include "value/map.h"

static_assert(sizeof(((stc_map_iter *)0)->stack) == sizeof(((val_map_iter *)0)->stack),
              "stc_map_iter mirrors val_map_iter");

static const stc_value map_api_invalid = {.tag = STC_T_INVALID};

stc_value stc_map_new(void) { return stc__val_map_new(); }

stc_value stc_map_put(stc_value m, stc_value k, stc_value v)
{
    stc_value r;
    if (m.tag != STC_T_MAP || k.tag == STC_T_INVALID || v.tag == STC_T_INVALID) {
        stc_value_release(m);
        stc_value_release(k);
        stc_value_release(v);
        return map_api_invalid;
    }
    return stc__val_map_put(m, k, v, &r) == 0 ? r : map_api_invalid;
}

stc_value stc_map_remove(stc_value m, stc_value k)
{
    stc_value r;
    if (m.tag != STC_T_MAP) {
        stc_value_release(m);
        return map_api_invalid;
    }
    return stc__val_map_remove(m, k, &r) == 0 ? r : map_api_invalid;
}

stc_value stc_map_get(stc_value m, stc_value k)
{
    if (m.tag != STC_T_MAP) return map_api_invalid;
    const stc_value *v = stc__val_map_find(m, k);
    return v ? *v : map_api_invalid;
}

size_t stc_map_len(stc_value m) { return m.tag == STC_T_MAP ? val_map_len(m) : 0; }

void stc_map_iter_init(stc_map_iter *it, stc_value m)
{
    it->top = 0;
    if (m.tag != STC_T_MAP) return;
    val_map_iter vi;
    stc__val_map_iter_init(&vi, m);
    for (int i = 0; i < vi.top; i++) it->stack[i] = vi.stack[i];
    it->top = vi.top;
}

bool stc_map_iter_next(stc_map_iter *it, stc_value *k, stc_value *v)
{
    if (it->top <= 0) return false;
    const val_map_node *n = it->stack[--it->top];
    *k = n->key;
    *v = n->val;
    for (const val_map_node *c = n->right; c && it->top < VAL_MAP_MAX_HEIGHT; c = c->left) it->stack[it->top++] = c;
    return true;
}
