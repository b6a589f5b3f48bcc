/* tests/fuzz/replay.c: runs a fuzz target's LLVMFuzzerTestOneInput once on
 * every file named, or found directly in a folder named, on the command line
 * (what libFuzzer does with files as arguments), so that ordinary builds
 * replay the corpus and the regression inputs. A crash, leak or sanitizer
 * report fails the program; exit 0 otherwise. A missing path is an error
 * (exit 2); an empty folder is not. */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Reads the whole file into a malloc'd buffer of exactly its size (so that
 * the sanitizers see a read past its end) and runs the target on it. */
static int ts_fz_run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  long size = -1;
  if (f && fseek(f, 0, SEEK_END) == 0)
    size = ftell(f);
  if (!f || size < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    if (f)
      fclose(f);
    return 1;
  }
  uint8_t *buf = malloc(size ? (size_t)size : 1);
  size_t n = buf ? fread(buf, 1, (size_t)size, f) : 0;
  fclose(f);
  if (!buf || n != (size_t)size) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    free(buf);
    return 1;
  }
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

static int ts_fz_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every regular file directly in `dir`, in name order; the count in *ran. */
static int ts_fz_run_dir(const char *dir, unsigned *ran) {
  DIR *dp = opendir(dir);
  if (!dp) {
    fprintf(stderr, "replay: cannot open folder %s\n", dir);
    return 1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  struct dirent *de;
  while ((de = readdir(dp))) {
    if (de->d_name[0] == '.')
      continue; /* ., .., and hidden files such as .gitkeep */
    size_t len = strlen(dir) + strlen(de->d_name) + 2;
    char *p = malloc(len);
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **nn = realloc(names, cap * sizeof *names);
      if (!nn) {
        free(p);
        rc = 1;
        break;
      }
      names = nn;
    }
    if (!p) {
      rc = 1;
      break;
    }
    snprintf(p, len, "%s/%s", dir, de->d_name);
    names[n++] = p;
  }
  closedir(dp);
  if (n)
    qsort(names, n, sizeof *names, ts_fz_cmp);
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      rc = ts_fz_run_file(names[i]);
      (*ran)++;
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE_OR_FOLDER...\n", argv[0]);
    return 2;
  }
  unsigned ran = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: %s: no such file or folder\n", argv[i]);
      return 2;
    }
    int rc;
    if (S_ISDIR(st.st_mode)) {
      rc = ts_fz_run_dir(argv[i], &ran);
    } else {
      rc = ts_fz_run_file(argv[i]);
      ran++;
    }
    if (rc)
      return 1;
  }
  printf("replay: %u inputs, no failure\n", ran);
  return 0;
}
