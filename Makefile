# Makefile - builds libtilec (static and shared), the tilec command, the
# tests and the benchmarks.  Plain make, no generator step.
#
#   make            library + tilec command          (into build/)
#   make deps       install missing Debian packages  (scripts/deps.sh)
#   make demo       deps, build, run `tilec demo`
#   make test       deps, build and run the whole suite
#   make check-layers  no file includes a header from a layer above its own
#   make check-errors  internal calls report errors in a tc_str, not a fixed buffer
#   make asan       the suite under AddressSanitizer + UBSan (into build-asan/)
#   make bench      build and run the benchmarks
#   make bench-dynamic  one kernel for 50 values of M against one per M (docs/dynamic.md)
#   make install    PREFIX=/usr/local
#   make fuzz       the libFuzzer harnesses (clang; into build/fuzz/, docs/fuzzing.md)
#   make fuzz-diff  a campaign of differential tests: CASES=1000 SEED=1 (docs/fuzzing.md)

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
SAN     ?=
OPT     ?= -O2
CFLAGS_ALL = -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) -g -fPIC \
             -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow \
             -Wno-missing-field-initializers -Iinclude $(SAN) $(CFLAGS)
LDLIBS_ALL = -lOpenCL -lsqlite3 -ldl -lm $(LDLIBS)

LIB_SRC  := $(sort $(wildcard src/*/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TOOL_SRC := $(sort $(wildcard tools/*.c))
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

all: $(BUILD)/libtilec.a $(BUILD)/libtilec.so $(BUILD)/tilec

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/libtilec.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/libtilec.so: $(LIB_OBJ)
	$(CC) -shared $(SAN) -Wl,-soname,$(SONAME) -o $@ $^ $(LDLIBS_ALL)
	ln -sf libtilec.so $(BUILD)/$(SONAME)

$(BUILD)/tilec: $(TOOL_OBJ) $(BUILD)/libtilec.a
	$(CC) $(SAN) -o $@ $(TOOL_OBJ) $(BUILD)/libtilec.a $(LDLIBS_ALL)

# tests and benchmarks include library headers (src/*/*.h): -MMD records
# them, so a header-only change rebuilds what includes it
$(BUILD)/tests/%: tests/%.c $(wildcard tests/*.h) $(BUILD)/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Isrc -MMD -MP -o $@ $< $(BUILD)/libtilec.a $(LDLIBS_ALL)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Isrc -MMD -MP -o $@ $< $(BUILD)/libtilec.a $(LDLIBS_ALL)

tests: $(TEST_BIN) $(BUILD)/tilec $(BUILD)/libtilec.so $(BENCH_BIN)

# deps runs before anything is compiled (a sub-make, so also under -j).
deps:
	sh scripts/deps.sh

demo: deps
	$(MAKE) all
	$(BUILD)/tilec demo

test: deps
	$(MAKE) tests
	TILEC=$(BUILD)/tilec TILEC_LIB=$(BUILD)/libtilec.so LDST_BENCH=$(BUILD)/bench/ldst_bandwidth \
	  NORMS_BENCH=$(BUILD)/bench/norms DYNAMIC_BENCH=$(BUILD)/bench/dynamic \
	  tests/run.sh $(TEST_BIN) tests/cli_test.sh tests/cli_conv_test.sh tests/cli_norm_test.sh tests/cli_driver_test.sh tests/cli_driver_lines_test.sh \
	  tests/cli_matmul_test.sh tests/cli_gemm_perfcfg_test.sh tests/cli_conv_fusion_test.sh \
	  tests/python_test.sh \
	  tests/install_test.sh tests/tutorial_test.sh tests/ldst_bench_test.sh tests/gemm_bench_test.sh \
	  tests/norms_bench_test.sh tests/dynamic_bench_test.sh \
	  tests/sass_check_test.sh tests/fuzz_smoke_test.sh \
	  tests/docs_words_test.sh tests/docs_images_test.sh tests/layers_test.sh tests/errors_test.sh

# The directories of src/ form layers (the list and the rules in
# scripts/check_layers.sh); `make test` runs it as tests/layers_test.sh.
check-layers:
	scripts/check_layers.sh

# Internal functions report errors in a tc_str *err, never a caller's
# (char *, size_t) buffer (scripts/check_errors.sh); `make test` runs it as
# tests/errors_test.sh.
check-errors:
	scripts/check_errors.sh

# The slow convolution set: every ResNet-50 layer shape in all
# three directions (about 3 minutes on a 2-core CPU).  `make test` runs the
# fast subset in tests/test_conv.c.
check-full: tests
	TILEC_CHECK_FULL=1 tests/run.sh $(BUILD)/tests/test_conv_full

# use_tls=0: LeakSanitizer's scan of dynamic thread-local storage crashes
# ("LeakSanitizer has encountered a fatal error", a bogus DTLS range) after
# PoCL's LLVM has run in the process; without TLS as a root the leak check
# can only report more, never less (tests/lsan.supp names what that adds).
# print_suppressions=0: no statistics at exit mixed into the commands'
# output (--json).
asan:
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:use_tls=0:print_suppressions=0 $(MAKE) BUILD=build-asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" test

# The libFuzzer harnesses fuzz/fuzz_*.c (docs/fuzzing.md), against the
# library built by clang with the fuzzer's coverage, ASan and UBSan into
# build/fuzz/obj.  Not part of all or test.
FUZZ_CC  ?= clang
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:fuzz/%.c=build/fuzz/%)

fuzz:
	$(MAKE) CC=$(FUZZ_CC) BUILD=build/fuzz/obj OPT=-O1 SAN="$(FUZZ_SAN)" fuzz-bins

fuzz-bins: $(FUZZ_BIN)

# the command's objects, its main renamed (libFuzzer has the main)
FUZZ_TOOL_OBJ = $(filter-out %/tilec.o,$(TOOL_OBJ)) $(BUILD)/tools/tilec_nomain.o

$(BUILD)/tools/tilec_nomain.o: tools/tilec.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Dmain=tilec_main -MMD -MP -c $< -o $@

build/fuzz/%: fuzz/%.c $(wildcard fuzz/*.h) $(BUILD)/libtilec.a $(FUZZ_TOOL_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Isrc -fsanitize=fuzzer -o $@ $< $(FUZZ_TOOL_OBJ) $(BUILD)/libtilec.a \
	  $(LDLIBS_ALL)

# Differential tests (docs/fuzzing.md): random fusions with random
# schedules run on the default OpenCL device and checked against the
# reference and an independent evaluation.  `make test` runs a fixed set
# of 200 (tests/test_diff.c); this runs a campaign, failures shrunk and
# printed as C programs:  make fuzz-diff CASES=5000 SEED=7
CASES ?= 1000
SEED ?= 1
DIFF_FLAGS ?= --shrink
fuzz-diff: $(BUILD)/tests/test_diff
	$(BUILD)/tests/test_diff --seed $(SEED) --cases $(CASES) $(DIFF_FLAGS)

# A benchmark that exits 3 found no device for its target (ldst_bandwidth
# without a CUDA GPU): reported, not a failure.  On a GPU: bench/hopper.sh.
bench: $(BENCH_BIN)
	@for b in $(BENCH_BIN); do echo "== $$b"; $$b; rc=$$?; \
	  if [ $$rc -eq 3 ]; then echo "(skipped: no device)"; elif [ $$rc -ne 0 ]; then exit 1; fi; done

# One kernel for a sweep of 50 values of M against one per M: compile
# count and time on OpenCL (bench/dynamic.c, docs/dynamic.md).
bench-dynamic: $(BUILD)/bench/dynamic
	$(BUILD)/bench/dynamic

# install / uninstall.  DESTDIR stages the tree (files go to
# $(DESTDIR)$(LIBDIR) ...) while the paths written into tilec.pc stay the
# final ones.  The shared library is libtilec.so.$(LIB_VERSION) with the soname
# $(SONAME) and the symlinks $(SONAME) and libtilec.so (for -ltilec).
LIB_VERSION := $(shell sed -n 's/^.define TILEC_VERSION "\(.*\)"/\1/p' include/tilec/tilec.h)
ifeq ($(LIB_VERSION),)
$(error cannot read TILEC_VERSION from include/tilec/tilec.h)
endif
SONAME = libtilec.so.$(firstword $(subst ., ,$(LIB_VERSION)))
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# paths under $(PREFIX) go into tilec.pc as ${prefix}/..., so that
# `pkg-config --define-prefix` can relocate it
pc_path = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/tilec \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 $(BUILD)/libtilec.a $(DESTDIR)$(LIBDIR)/
	install -m 644 $(BUILD)/libtilec.so $(DESTDIR)$(LIBDIR)/libtilec.so.$(LIB_VERSION)
	ln -sf libtilec.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libtilec.so
	install -m 755 $(BUILD)/tilec $(DESTDIR)$(BINDIR)/
	install -m 644 include/tilec/*.h $(DESTDIR)$(INCLUDEDIR)/tilec/
	install -m 644 docs/tilec.1 $(DESTDIR)$(MANDIR)/man1/
	sed -e '/^#/d' -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_path,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(call pc_path,$(INCLUDEDIR))|' -e 's|@VERSION@|$(LIB_VERSION)|' \
	    -e 's|@LIBS_PRIVATE@|$(strip $(LDLIBS_ALL))|' tilec.pc.in >$(BUILD)/tilec.pc
	install -m 644 $(BUILD)/tilec.pc $(DESTDIR)$(PKGCONFIGDIR)/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libtilec.a $(DESTDIR)$(LIBDIR)/libtilec.so \
	  $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libtilec.so.$(LIB_VERSION) \
	  $(DESTDIR)$(BINDIR)/tilec $(DESTDIR)$(MANDIR)/man1/tilec.1 $(DESTDIR)$(PKGCONFIGDIR)/tilec.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/tilec

.PHONY: install uninstall

clean:
	rm -rf build build-asan

.PHONY: all deps demo tests test check-layers check-errors check-full asan bench bench-dynamic install clean fuzz fuzz-bins fuzz-diff
.SECONDARY:

-include $(LIB_OBJ:.o=.d) $(TOOL_OBJ:.o=.d) $(TEST_BIN:=.d) $(BENCH_BIN:=.d) \
  $(BUILD)/tools/tilec_nomain.d
