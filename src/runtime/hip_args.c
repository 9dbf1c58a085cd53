/* hip_args.c - the argument buffer of a HIP kernel launch, packed as the
 * kernel's signature says (runtime.h: tc_hip_signature_parse,
 * tc_hip_args_pack).
 *
 * tc_hip_run launches through hipModuleLaunchKernel's `extra` argument
 * (HIP_LAUNCH_PARAM_BUFFER_POINTER): one buffer holding every parameter
 * at its offset, from which the runtime copies each parameter at the
 * offset the code object's metadata gives.  Those offsets are the C
 * layout of the parameters in order: each at the next multiple of its
 * alignment, pointers 8 bytes (amdgcn is LP64).  The signature is read
 * from the source the HIP dialect printed; nothing here needs a device. */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

/* ---- a small tokenizer over C++ source ------------------------------------ */

typedef struct lexer {
  const char *p;
  char tok[64]; /* the current token: an identifier, a number or one punctuation character */
  int ident;    /* tok is an identifier */
} lexer;

static int ident_char(char c, int first) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (!first && c >= '0' && c <= '9');
}

/* Skips blanks, comments, string and character literals and preprocessor
 * lines; reads the next token.  0 at the end of the source. */
static int next(lexer *lx) {
  const char *p = lx->p;
  int line_start = p[-1] == '\n';
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
      if (*p == '\n') line_start = 1;
      p++;
    }
    if (p[0] == '/' && p[1] == '/') {
      while (*p && *p != '\n') p++;
    } else if (p[0] == '/' && p[1] == '*') {
      const char *e = strstr(p + 2, "*/");
      p = e ? e + 2 : p + strlen(p);
    } else if (*p == '#' && line_start) { /* a directive, with its continuation lines */
      while (*p && !(*p == '\n' && p[-1] != '\\')) p++;
    } else if (*p == '"' || *p == '\'') {
      char q = *p++;
      while (*p && *p != q) p += p[0] == '\\' && p[1] ? 2 : 1;
      if (*p) p++;
    } else {
      break;
    }
  }
  lx->tok[0] = 0, lx->ident = 0;
  if (!*p) {
    lx->p = p;
    return 0;
  }
  size_t n = 0;
  if (ident_char(*p, 1) || (*p >= '0' && *p <= '9')) {
    lx->ident = ident_char(*p, 1);
    while (ident_char(*p, 0)) {
      if (n + 1 < sizeof lx->tok) lx->tok[n++] = *p;
      p++;
    }
  } else {
    lx->tok[n++] = *p++;
  }
  lx->tok[n] = 0;
  lx->p = p;
  return 1;
}

static int is(const lexer *lx, const char *t) { return strcmp(lx->tok, t) == 0; }

/* After an opening '(': skips to just past its matching ')'.  0 when the
 * source ends first. */
static int skip_parens(lexer *lx) {
  for (int depth = 1; depth > 0;) {
    if (!next(lx)) return 0;
    if (is(lx, "(")) depth++;
    if (is(lx, ")")) depth--;
  }
  return 1;
}

/* ---- parameter types ---------------------------------------------------------- */

/* The size of a parameter passed by value, from its type words without
 * const / volatile ("unsigned int"); 0 for a type tilec does not pass. */
static size_t scalar_size(const char *words) {
  static const struct {
    const char *type;
    size_t size;
  } types[] = {
      {"bool", 1}, {"char", 1}, {"signed char", 1}, {"unsigned char", 1}, {"int8_t", 1},
      {"uint8_t", 1}, {"short", 2}, {"short int", 2}, {"signed short", 2},
      {"unsigned short", 2}, {"unsigned short int", 2}, {"int16_t", 2}, {"uint16_t", 2},
      {"_Float16", 2}, {"__half", 2}, {"int", 4}, {"signed", 4}, {"signed int", 4},
      {"unsigned", 4}, {"unsigned int", 4}, {"int32_t", 4}, {"uint32_t", 4}, {"float", 4},
      {"long", 8}, {"long int", 8}, {"unsigned long", 8}, {"unsigned long int", 8},
      {"long long", 8}, {"long long int", 8}, {"unsigned long long", 8},
      {"unsigned long long int", 8}, {"int64_t", 8}, {"uint64_t", 8}, {"size_t", 8},
      {"ptrdiff_t", 8}, {"double", 8},
  };
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    if (strcmp(words, types[i].type) == 0) return types[i].size;
  return 0;
}

/* Appends a token to a printed type: "const float" + "*" -> "const float*". */
static void type_cat(char *type, size_t cap, const char *tok) {
  size_t n = strlen(type);
  if (n && strcmp(tok, "*") != 0 && n + 1 < cap) type[n++] = ' ', type[n] = 0;
  snprintf(type + n, cap - n, "%s", tok);
}

/* Fills p from its tokens (qualifiers like __restrict__ already dropped):
 * the last identifier is the name, the rest the type. */
static tc_status param_from_tokens(char toks[][64], int ntok, int index, const char *kernel,
                                   tc_hip_param *p, tc_str *err) {
  memset(p, 0, sizeof *p);
  int name_at = ntok > 1 && ident_char(toks[ntok - 1][0], 1) ? ntok - 1 : -1;
  if (name_at >= 0) snprintf(p->name, sizeof p->name, "%s", toks[name_at]);
  char words[128] = "";
  for (int i = 0; i < ntok; i++) {
    if (i == name_at) continue;
    type_cat(p->type, sizeof p->type, toks[i]);
    if (strcmp(toks[i], "*") == 0) p->pointer = 1;
    else if (strcmp(toks[i], "const") != 0 && strcmp(toks[i], "volatile") != 0)
      type_cat(words, sizeof words, toks[i]);
  }
  p->size = p->pointer ? 8 : scalar_size(words);
  p->align = p->size;
  if (p->size == 0) {
    tc_str_printf(err, "kernel '%s': parameter %d (%s%s%s) has a type tilec cannot pass to a HIP "
                  "kernel; parameters are pointers or integer and floating-point scalars",
                  kernel, index, p->type, p->name[0] ? " " : "", p->name);
    return TC_ERR_UNSUPPORTED;
  }
  return TC_OK;
}

/* ---- the signature ------------------------------------------------------------ */

/* After the '(' of kernel's parameter list: reads the parameters. */
static tc_status read_params(lexer *lx, const char *kernel, tc_hip_signature *sig, tc_str *err) {
  char toks[16][64];
  int ntok = 0, depth = 0, overflow = 0;
  for (;;) {
    if (!next(lx)) {
      tc_str_printf(err, "kernel '%s': its parameter list does not end", kernel);
      return TC_ERR_COMPILE;
    }
    int close = depth == 0 && is(lx, ")"), comma = depth == 0 && is(lx, ",");
    if (close || comma) {
      /* "()" and "(void)" take nothing */
      int empty = ntok == 0 || (ntok == 1 && strcmp(toks[0], "void") == 0 && close &&
                                sig->nparams == 0);
      if (overflow) {
        tc_str_printf(err, "kernel '%s': parameter %d is longer than tilec reads", kernel,
                      sig->nparams);
        return TC_ERR_UNSUPPORTED;
      }
      if (!empty || comma) {
        if (sig->nparams >= TC_HIP_MAX_PARAMS) {
          tc_str_printf(err, "kernel '%s' has more than %d parameters", kernel, TC_HIP_MAX_PARAMS);
          return TC_ERR_UNSUPPORTED;
        }
        tc_hip_param *p = &sig->params[sig->nparams];
        tc_status st = param_from_tokens(toks, ntok, sig->nparams, kernel, p, err);
        if (st) return st;
        sig->nparams++;
      }
      ntok = 0;
      if (close) return TC_OK;
      continue;
    }
    if (is(lx, "(") || is(lx, "<") || is(lx, "[")) depth++;
    if (is(lx, ")") || is(lx, ">") || is(lx, "]")) depth--;
    if (is(lx, "__restrict__") || is(lx, "__restrict") || is(lx, "restrict")) continue;
    if (ntok < 16)
      snprintf(toks[ntok++], sizeof toks[0], "%s", lx->tok);
    else
      overflow = 1;
  }
}

tc_status tc_hip_signature_parse(const char *source, const char *kernel, tc_hip_signature *sig,
                                 tc_str *err) {
  memset(sig, 0, sizeof *sig);
  if (!source || !kernel) {
    tc_str_printf(err, "tc_hip_signature_parse: source and kernel must not be NULL");
    return TC_ERR_ARGUMENT;
  }
  static const char *attrs[] = {"__launch_bounds__", "__cluster_dims__", "__attribute__",
                                "__declspec", "alignas"};
  /* a sentinel before the text, so that the first line counts as a line start */
  static const char nl[] = "\n";
  tc_str text;
  tc_str_init(&text);
  tc_str_cat(&text, nl);
  tc_str_cat(&text, source);
  lexer lx = {tc_str_cstr(&text) + 1, "", 0};
  tc_status st = TC_ERR_COMPILE;
  int matched = 0;
  while (!matched && next(&lx)) {
    if (!is(&lx, "__global__")) continue;
    /* the declaration: attributes (skipped with their arguments), the
     * return type, then the name and its "(" */
    char prev[64] = "";
    int found = 0;
    while (next(&lx) && !is(&lx, ";") && !is(&lx, "{")) {
      if (is(&lx, "(")) {
        int attr = 0;
        for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) attr |= strcmp(prev, attrs[i]) == 0;
        if (attr) {
          if (!skip_parens(&lx)) break;
          prev[0] = 0;
          continue;
        }
        found = strcmp(prev, kernel) == 0;
        break;
      }
      snprintf(prev, sizeof prev, "%s", lx.tok);
    }
    if (!found) continue;
    matched = 1;
    st = read_params(&lx, kernel, sig, err);
  }
  tc_str_free(&text);
  if (!matched) tc_str_printf(err, "the HIP source has no __global__ kernel named '%s'", kernel);
  if (st != TC_OK) {
    sig->nparams = 0;
    return st;
  }
  size_t off = 0;
  for (int i = 0; i < sig->nparams; i++) {
    tc_hip_param *p = &sig->params[i];
    off = (off + p->align - 1) / p->align * p->align;
    p->offset = off;
    off += p->size;
  }
  sig->bytes = off;
  return TC_OK;
}

/* ---- packing ------------------------------------------------------------------ */

tc_status tc_hip_args_pack(const tc_hip_signature *sig, const tc_rt_buffer *bufs, int nbufs,
                           const uint64_t *dev, unsigned char *out, size_t cap, tc_str *err) {
  if (nbufs != sig->nparams) {
    tc_str_printf(err, "the kernel takes %d parameter%s but the launch gives %d buffer%s",
                  sig->nparams, sig->nparams == 1 ? "" : "s", nbufs, nbufs == 1 ? "" : "s");
    return TC_ERR_ARGUMENT;
  }
  if (cap < sig->bytes) {
    tc_str_printf(err, "the argument buffer has %zu bytes; the kernel's parameters take %zu", cap,
                  sig->bytes);
    return TC_ERR_ARGUMENT;
  }
  memset(out, 0, sig->bytes);
  for (int i = 0; i < sig->nparams; i++) {
    const tc_hip_param *p = &sig->params[i];
    if (p->pointer) {
      memcpy(out + p->offset, &dev[i], sizeof dev[i]);
      continue;
    }
    if (bufs[i].bytes != p->size || !bufs[i].host) {
      tc_str_printf(err, "parameter %d (%s %s) is passed by value: its buffer must hold its %zu "
                    "bytes, not %zu", i, p->type, p->name, p->size, bufs[i].bytes);
      return TC_ERR_ARGUMENT;
    }
    memcpy(out + p->offset, bufs[i].host, p->size);
  }
  return TC_OK;
}
