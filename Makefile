# Makefile - builds libtilec (static and shared), the tilec command, the
# tests and the benchmarks.  Plain make, no generator step.
#
#   make            library + tilec command          (into build/)
#   make deps       install missing Debian packages  (scripts/deps.sh)
#   make demo       deps, build, run `tilec demo`
#   make test       deps, build and run the whole suite
#   make asan       the suite under AddressSanitizer + UBSan (into build-asan/)
#   make bench      build and run the benchmarks
#   make install    PREFIX=/usr/local

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
SAN     ?=
OPT     ?= -O2
CFLAGS_ALL = -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) -g -fPIC \
             -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow \
             -Wno-missing-field-initializers -Iinclude $(SAN) $(CFLAGS)
LDLIBS_ALL = -lOpenCL -ldl -lm $(LDLIBS)

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
	$(CC) -shared $(SAN) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/tilec: $(TOOL_OBJ) $(BUILD)/libtilec.a
	$(CC) $(SAN) -o $@ $(TOOL_OBJ) $(BUILD)/libtilec.a $(LDLIBS_ALL)

$(BUILD)/tests/%: tests/%.c tests/test.h $(BUILD)/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Isrc -o $@ $< $(BUILD)/libtilec.a $(LDLIBS_ALL)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Isrc -o $@ $< $(BUILD)/libtilec.a $(LDLIBS_ALL)

tests: $(TEST_BIN) $(BUILD)/tilec

# deps runs before anything is compiled (a sub-make, so also under -j).
deps:
	sh scripts/deps.sh

demo: deps
	$(MAKE) all
	$(BUILD)/tilec demo

test: deps
	$(MAKE) tests
	TILEC=$(BUILD)/tilec tests/run.sh $(TEST_BIN) tests/cli_test.sh

asan:
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(MAKE) BUILD=build-asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" test

bench: $(BENCH_BIN)
	@for b in $(BENCH_BIN); do echo "== $$b"; $$b || exit 1; done

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include/tilec
	install -m 644 $(BUILD)/libtilec.a $(BUILD)/libtilec.so $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/tilec $(DESTDIR)$(PREFIX)/bin/
	install -m 644 include/tilec/*.h $(DESTDIR)$(PREFIX)/include/tilec/

clean:
	rm -rf build build-asan

.PHONY: all deps demo tests test asan bench install clean
.SECONDARY:

-include $(LIB_OBJ:.o=.d) $(TOOL_OBJ:.o=.d)
