/* tests/fuzz/fuzz_script.c: TorchScript source through the lexer, the
 * parser and the emitter, as a model's code/ file. The input becomes
 * code/__torch__/m.py of a stored archive whose data.pkl holds an object of
 * the first class the source defines ("class Net(Module):" at column 0,
 * else "Net"); then forward is compiled (with everything it calls) and the
 * module tree printed. */
#include "frontend.h"
#include "fuzz.h"
#include "zipmem.h"

#include <stdlib.h>
#include <string.h>

/* The name of the first top-level class in `src`, copied into `out`. */
static void ts_fz_class_name(const uint8_t *src, size_t n, char *out, size_t cap) {
  strcpy(out, "Net");
  for (size_t i = 0; i + 6 < n; i++) {
    if ((i == 0 || src[i - 1] == '\n') && memcmp(src + i, "class ", 6) == 0) {
      size_t j = i + 6, k = 0;
      while (j < n && k + 1 < cap &&
             ((src[j] >= 'a' && src[j] <= 'z') || (src[j] >= 'A' && src[j] <= 'Z') ||
              (src[j] >= '0' && src[j] <= '9') || src[j] == '_'))
        out[k++] = (char)src[j++];
      if (k > 0) {
        out[k] = 0;
        return;
      }
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char cls[128];
  ts_fz_class_name(data, size, cls, sizeof cls);
  /* PROTO 2, GLOBAL "__torch__.m <cls>", EMPTY_TUPLE, NEWOBJ, EMPTY_DICT,
   * BUILD, STOP */
  char pkl[192];
  size_t cl = strlen(cls);
  memcpy(pkl, "\x80\x02" "c__torch__.m\n", 15);
  memcpy(pkl + 15, cls, cl);
  memcpy(pkl + 15 + cl, "\n)\x81}b.", 6);
  const ts_fz_entry entries[] = {
      {"archive/data.pkl", pkl, 21 + cl},
      {"archive/code/__torch__/m.py", data, size},
  };
  size_t zlen = 0;
  uint8_t *zip = ts_fz_zip_stored(entries, 2, &zlen);
  if (!zip)
    return 0;
  ts_diag d = {0};
  ts_fe_model *m = ts_fe_model_load_buffer(zip, zlen, "fuzz.pt", &d);
  if (m) {
    (void)ts_fe_model_method(m, "forward", &d);
    ts_buf b = {0};
    (void)ts_fe_model_print_code(m, &b, &d);
    ts_buf_free(&b);
    ts_fe_model_free(m);
  }
  ts_diag_free(&d);
  free(zip);
  return 0;
}
