/* tools/tool_util.h: what the command-line tools share: reading files and
 * turning --input/--example arguments into the input types that
 * specialization (passes/shape_prop.c) takes. */
#ifndef TSAOT_TOOL_UTIL_H
#define TSAOT_TOOL_UTIL_H

#include "passes.h"

/* tsaot's version ("0.1.0", CMake's project version) and the line every
 * tool prints for --version: "tsaot 0.1.0 (LLVM 16.0.6)" for tsaot,
 * "tsaot-run (tsaot) 0.1.0 (LLVM 16.0.6)" for the others. */
const char *ts_tool_version(void);
const char *ts_tool_llvm_version(void);
void ts_tool_print_version(const char *prog);

/* Prints diagnostics text (a ts_diag's, a run's error) to stderr in the
 * tools' one format: a line "error: ...", "warning: ..." or "note: ..."
 * gets "PROG: " in front; placed lines ("FILE:LINE:COL: error: ...") and
 * the indented source lines after them stay as they are. NULL or "":
 * `fallback` ("cannot load the model"), as "PROG: error: fallback". */
void ts_tool_diag_print(const char *prog, const char *text, const char *fallback);

/* After a model failed to load: when `path` is a file torch.save wrote (a
 * state_dict, a pickled module: a zip archive with data.pkl and no code/,
 * or a bare pickle), prints one line "PROG: error: PATH: not TorchScript:
 * ..." telling how to make TorchScript of it, and returns true; false (and
 * prints nothing) otherwise, for the loader's own message. */
bool ts_tool_explain_not_torchscript(const char *prog, const char *path);

/* For tsaot-dump --summary and what tsaot embeds as NAME_tsaot_info: the
 * operators of `g` (nested blocks and fusion groups' subgraphs included;
 * prim::Constant, prim::Param and the like left out), "ops: K kinds, N
 * nodes\n" then "  aten::linear 3\n" per kind, most used first; then
 * "unsupported: none\n" or the operators tsaot has no kernel for, each
 * place with its source line (source: ts_rt_model_source's shape, may be
 * NULL). False when out of memory. */
bool ts_tool_summary_ops(ts_buf *b, const ts_graph *g, const char *(*source)(void *, const char *, size_t *),
                         void *source_ctx);

/* All of `path` ("-": standard input) in a malloc'd, NUL-terminated buffer;
 * NULL after printing "PROG: error: ..." to stderr. At most `max` bytes. */
char *ts_tool_read_file(const char *prog, const char *path, size_t max, size_t *len);

/* One type per input of `g` for ts_pass_env.input_types: `specs[k]` stands
 * for the k-th input after a leading input of class type (self), and is
 * either a .npy file (its dtype and sizes: an example input) or a spec text
 * ("f32[1,3,224,224]", passes/spec.c). A 0-d .npy given for an int, float
 * or bool parameter is a number, not a tensor: its entry stays NULL. Types
 * live in g's arena; the array is malloc'd (free it). NULL with the reason
 * in d (more specs than inputs, an unreadable file, a bad spec). */
const ts_type **ts_tool_input_types(ts_graph *g, const char *const *specs, uint32_t nspecs, ts_diag *d);

/* ------------------------------------------------------------ arguments
 *
 * Arguments on a command line (tsaot-run, tsaot --example, tsaot-bench),
 * each a word or a group of words, as include/tsaot.h's slots are:
 *   X.npy          an array (a tensor, a 0-d number, a 1-d List[int], a 1-d
 *                  uint8 str); for tsaot --input, a spec text ("f32[1,3]")
 *   none           None
 *   str:TEXT       a str: the bytes after "str:"
 *   [ ARG ... ]    a List of anything but numbers (a List[int] is one 1-d
 *                  .npy): its length, then the elements
 *   ( ARG ... )    a Tuple: its elements
 * The brackets are words of their own. */
typedef enum ts_tool_arg_kind {
  TS_TOOL_ARG_WORD,
  TS_TOOL_ARG_NONE,
  TS_TOOL_ARG_STR,
  TS_TOOL_ARG_LIST,
  TS_TOOL_ARG_TUPLE,
} ts_tool_arg_kind;

typedef struct ts_tool_arg {
  ts_tool_arg_kind kind;
  const char *word; /* the word (STR: "str:TEXT"; LIST, TUPLE: "[" or "(") */
  uint32_t n;       /* LIST, TUPLE: elements */
  struct ts_tool_arg *elems;
} ts_tool_arg;

/* Whether a word is one of the argument syntax's: none, str:..., a bracket. */
bool ts_tool_arg_syntax(const char *w);
/* The arguments in words[0..nwords): a tree each, into *args (*nargs of
 * them; free with ts_tool_args_free). False with the reason in why[cap]
 * (a bracket without its match, groups nested over 32 deep). */
bool ts_tool_args_parse(const char *const *words, uint32_t nwords, ts_tool_arg **args, uint32_t *nargs, char *why,
                        size_t cap);
void ts_tool_args_free(ts_tool_arg *args, uint32_t nargs);
/* Whether args[k] has the shape of a parameter of type types[k] (names[k]
 * its name), k < nargs: none only for an Optional, [ ] for a List of other
 * than numbers, ( ) for a Tuple of as many elements, one word for the
 * rest. With `forms` not NULL, each argument's form (ts_pass_spec_leaves)
 * in arena a and the words of its leaves (in slot order) appended to
 * leaves[*nleaves] (room for as many as there are words). False with
 * "argument 3 (key_padding_mask): ..." in why. */
bool ts_tool_args_check(const ts_tool_arg *args, uint32_t nargs, const ts_type *const *types,
                        const char *const *names, ts_arena *a, const ts_pass_form **forms, const char **leaves,
                        uint32_t *nleaves, ts_buf *why);

/* The slots of arguments (include/tsaot.h): a tensor per .npy (read), a
 * 1-d uint8 tensor per str:, a 0-d int64 length per [ ], NULL per none;
 * word[i]: the word slot i comes from ("in0.npy", "none", "[" for a
 * length), for messages. */
typedef struct ts_tool_slots {
  uint32_t n;
  ts_rt_tensor **t;
  const char **word;
} ts_tool_slots;
/* False with the reason in c (an unreadable .npy, out of memory). */
bool ts_tool_slots_make(ts_rt_ctx *c, const ts_tool_arg *args, uint32_t nargs, ts_tool_slots *s);
void ts_tool_slots_free(ts_tool_slots *s);
/* The arguments of types types[0..nargs) (names[]: their names) from the
 * slots, by runtime/hosted/io.c's rules, into out[] (new references). False with
 * "WORD (argument K 'name'): why" in why. */
bool ts_tool_slots_values(ts_rt_ctx *c, const ts_tool_slots *s, const ts_type *const *types,
                          const char *const *names, uint32_t nargs, ts_iv *out, ts_buf *why);

#endif
