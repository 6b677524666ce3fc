/* print.c - values as STCLang text and as JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "value/value.h"

void val_print_float(buf *b, double f)
{
    if (isnan(f)) { buf_puts(b, "nan"); return; }
    if (isinf(f)) { buf_puts(b, f < 0 ? "-inf" : "inf"); return; }
    char tmp[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, f);
        if (strtod(tmp, NULL) == f) break;
    }
    buf_puts(b, tmp);
    for (const char *p = tmp; *p; p++)
        if (*p == '.' || *p == 'e' || *p == 'n' || *p == 'i') return;
    buf_puts(b, ".0");
}

static void val_print_string(buf *b, const char *s, size_t len, bool json)
{
    buf_putc(b, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': buf_puts(b, "\\\""); break;
        case '\\': buf_puts(b, "\\\\"); break;
        case '\n': buf_puts(b, "\\n"); break;
        case '\t': buf_puts(b, "\\t"); break;
        case '\r': buf_puts(b, "\\r"); break;
        default:
            if (c < 0x20 || c == 0x7f) buf_printf(b, json ? "\\u%04x" : "\\x%02x", c);
            else buf_putc(b, (char)c);
        }
    }
    buf_putc(b, '"');
}

void val_print_text_string(buf *b, const char *s, size_t len) { val_print_string(b, s, len, false); }

/* Depth guard: values nested deeper than this print as "..." rather than
 * recursing without bound. */
#define VAL_PRINT_MAX_DEPTH 10000

static void val_print(buf *b, stc_value v, bool json, int depth)
{
    if (depth > VAL_PRINT_MAX_DEPTH) { buf_puts(b, json ? "null" : "..."); return; }
    switch (v.tag) {
    case STC_T_INVALID: buf_puts(b, json ? "null" : "<invalid>"); break;
    case STC_T_UNIT: buf_puts(b, json ? "null" : "()"); break;
    case STC_T_INT: buf_printf(b, "%lld", (long long)v.as.i); break;
    case STC_T_FLOAT:
        if (json && !isfinite(v.as.f)) {
            buf_putc(b, '"');
            val_print_float(b, v.as.f);
            buf_putc(b, '"');
        } else {
            val_print_float(b, v.as.f);
        }
        break;
    case STC_T_BOOL: buf_puts(b, v.as.b ? "true" : "false"); break;
    case STC_T_STR: val_print_string(b, val_as_str(v)->data, val_as_str(v)->len, json); break;
    case STC_T_LIST:
    case STC_T_TUPLE: {
        bool list = v.tag == STC_T_LIST;
        buf_putc(b, json || list ? '[' : '(');
        for (size_t i = 0; i < val_seq_len(v); i++) {
            if (i) buf_puts(b, ", ");
            val_print(b, val_seq_items(v)[i], json, depth + 1);
        }
        buf_putc(b, json || list ? ']' : ')');
        break;
    }
    case STC_T_INL:
    case STC_T_INR: {
        const char *side = v.tag == STC_T_INL ? "inl" : "inr";
        stc_value p = val_box_get(v);
        if (json) {
            buf_printf(b, "{\"%s\": ", side);
            val_print(b, p, json, depth + 1);
            buf_putc(b, '}');
        } else {
            bool paren = p.tag == STC_T_INL || p.tag == STC_T_INR ||
                         (p.tag == STC_T_INT && p.as.i < 0) || (p.tag == STC_T_FLOAT && p.as.f < 0);
            buf_printf(b, "%s ", side);
            if (paren) buf_putc(b, '(');
            val_print(b, p, json, depth + 1);
            if (paren) buf_putc(b, ')');
        }
        break;
    }
    case STC_T_FUNC: buf_puts(b, json ? "\"<fn>\"" : "<fn>"); break;
    case STC_T_USER: buf_puts(b, json ? "\"<object>\"" : "<object>"); break;
    }
}

void val_print_text(buf *b, stc_value v) { val_print(b, v, false, 0); }
void val_print_json(buf *b, stc_value v) { val_print(b, v, true, 0); }

char *stc_value_to_text(stc_value v)
{
    buf b = BUF_INIT;
    val_print_text(&b, v);
    return buf_take(&b);
}

char *stc_value_to_json(stc_value v)
{
    buf b = BUF_INIT;
    val_print_json(&b, v);
    return buf_take(&b);
}
