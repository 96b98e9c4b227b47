# Fuzzing and memory checking (tests/fuzz/README.md).  Included from the
# Makefile after its variables (LIB_SRC, WARN, DEP_CFLAGS, DEP_LIBS, STAMP,
# TEST_BIN, VERSION):
#   make fuzz [FUZZ_SECONDS=60]   each libFuzzer harness in turn, FUZZ_SECONDS each
#   make fuzz-regress             replay tests/fuzz/regress and the seed corpora once
#   make memcheck                 build/rel/tests/check_* and tests/cli.sh under valgrind
# The fuzz build is clang + libFuzzer + ASan + UBSan in build/fuzz (GSL and
# libyaml are the system's, not instrumented).

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_DIR     := build/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all \
                -fno-omit-frame-pointer
# -Wno-error: a warning only clang gives must not break `make check`;
# -Wno-double-promotion: clang flags glibc's NAN (a float) in every use.
FUZZ_CFLAGS   = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O1 -g \
                $(FUZZ_SAN) $(WARN) -Wno-error -Wno-double-promotion -MMD -MP \
                -DHS_VERSION='"$(VERSION)"' $(DEP_CFLAGS)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_DIR)/%.o)
FUZZ_NAMES   := expr model
FUZZ_BIN     := $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%)
FUZZ_STAMP   := build/.deps-fuzz
# libFuzzer options: one process, a 10 s limit per input (a hang is a finding).
FUZZ_OPTS     = -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
                -artifact_prefix=$(FUZZ_DIR)/artifacts/
FUZZ_REGRESS_TIMEOUT ?= 2
FUZZ_MAXLEN_expr  := 4096
FUZZ_MAXLEN_model := 16384
FUZZ_ENV      = ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: fuzz fuzz-build fuzz-regress fuzz-expr fuzz-model memcheck

$(FUZZ_STAMP): scripts/install-deps.sh
	@mkdir -p build
	@HOLOSIM_FUZZ_DEPS=1 sh scripts/install-deps.sh
	@touch $@

$(FUZZ_DIR)/%.o: %.c | $(STAMP) $(FUZZ_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/libholosim.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DIR)/libholosim.a | $(STAMP) $(FUZZ_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Isrc -fsanitize=fuzzer -o $@ $< \
	    $(FUZZ_DIR)/libholosim.a $(DEP_LIBS)

fuzz-build: $(FUZZ_BIN)

# One fuzzer at a time (make fuzz-expr, make fuzz-model run one); new
# inputs go to build/fuzz/corpus_NAME (the seeds in tests/fuzz/corpus_NAME
# stay as they are), crashes to build/fuzz/artifacts.
fuzz: $(FUZZ_BIN)
	@set -e; for f in $(FUZZ_NAMES); do $(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) fuzz-$$f; done

$(FUZZ_NAMES:%=fuzz-%): fuzz-%: $(FUZZ_DIR)/fuzz_%
	@mkdir -p $(FUZZ_DIR)/artifacts $(FUZZ_DIR)/corpus_$*
	@echo "== fuzz_$* for $(FUZZ_SECONDS) s"
	$(FUZZ_ENV) $< $(FUZZ_OPTS) -max_len=$(FUZZ_MAXLEN_$*) \
	    $(if $(wildcard tests/fuzz/$*.dict),-dict=tests/fuzz/$*.dict) \
	    -max_total_time=$(FUZZ_SECONDS) $(FUZZ_DIR)/corpus_$* tests/fuzz/corpus_$*

# Every seed and reproducer through its harness once (no fuzzing): a file
# given to a libFuzzer binary is run once, within FUZZ_REGRESS_TIMEOUT
# seconds (2: a reproducer of a slow input must stay fast).  Reproducers are routed by name
# (tests/fuzz/regress/expr-*, tests/fuzz/regress/model-*) and run one per
# process, so every failing one is named.
fuzz-regress: $(FUZZ_BIN)
	@fail=0; for f in $(FUZZ_NAMES); do \
	    seeds=$$(ls tests/fuzz/corpus_$$f/* 2>/dev/null); \
	    if [ -n "$$seeds" ] && ! $(FUZZ_ENV) $(FUZZ_DIR)/fuzz_$$f -timeout=$(FUZZ_REGRESS_TIMEOUT) $$seeds \
	            >$(FUZZ_DIR)/regress_$$f.log 2>&1; then \
	        tail -n 40 $(FUZZ_DIR)/regress_$$f.log; \
	        echo "FAIL fuzz_$$f on its seed corpus (log: $(FUZZ_DIR)/regress_$$f.log)"; \
	        fail=$$((fail + 1)); fi; \
	    for r in tests/fuzz/regress/$$f-*; do [ -f "$$r" ] || continue; \
	        if ! $(FUZZ_ENV) $(FUZZ_DIR)/fuzz_$$f -timeout=$(FUZZ_REGRESS_TIMEOUT) "$$r" \
	                >$(FUZZ_DIR)/regress.log 2>&1; then \
	            grep -m 3 -E "ERROR|runtime error|round trip|without|Timeout" $(FUZZ_DIR)/regress.log; \
	            echo "FAIL $$r"; fail=$$((fail + 1)); fi; \
	    done; \
	done; \
	echo "fuzz-regress: $$fail failed"; [ $$fail = 0 ]

# valgrind memcheck on the release build: each Check suite (CK_FORK=no so
# valgrind sees the tests' own code), then tests/cli.sh through a wrapper
# that runs bin/holosim under valgrind, one log per process.
# A valgrind error exits 97 (not 1: a failing Check suite or holosim's usage
# error exit 1 too) and is always fatal.  A test that fails under valgrind
# for another reason is fatal too, except the suites in MEMCHECK_XFAIL
# (none now: src/io/fmt.c probes for valgrind's double-precision long double
# and falls back to exact snprintf).  Because of valgrind's 20-50x slowdown
# against cli.sh's 3 s and 10 s limits, cli.sh's own verdict is only
# reported; the valgrind logs decide.
MEMCHECK_DIR  := build/memcheck
MEMCHECK_XFAIL ?=
VALGRIND_OPTS  = -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
                 --show-leak-kinds=definite,indirect --error-exitcode=97

memcheck: $(TEST_BIN) $(BIN) build/.deps-full
	@if [ "$(SANITIZE)" = 1 ]; then echo "memcheck: use the release build (no SANITIZE=1)"; exit 1; fi
	@command -v valgrind >/dev/null || HOLOSIM_FUZZ_DEPS=1 sh scripts/install-deps.sh
	@rm -rf $(MEMCHECK_DIR) && mkdir -p $(MEMCHECK_DIR)
	@fail=0; for t in $(TEST_BIN); do n=$$(basename $$t); \
	    CK_FORK=no valgrind $(VALGRIND_OPTS) --track-origins=yes $$t \
	        >$(MEMCHECK_DIR)/$$n.log 2>&1; rc=$$?; \
	    if [ $$rc = 0 ]; then echo "ok    $$n"; \
	    elif [ $$rc = 97 ]; then cat $(MEMCHECK_DIR)/$$n.log; \
	        echo "FAIL  $$n: valgrind errors"; fail=$$((fail + 1)); \
	    elif echo " $(MEMCHECK_XFAIL) " | grep -q " $$n "; then \
	        echo "xfail $$n: fails under valgrind, no valgrind error (see MEMCHECK_XFAIL)"; \
	    else tail -n 20 $(MEMCHECK_DIR)/$$n.log; \
	        echo "FAIL  $$n: exit $$rc under valgrind"; fail=$$((fail + 1)); fi; \
	done; [ $$fail = 0 ]
	@printf '#!/bin/sh\nexec valgrind $(VALGRIND_OPTS) --log-file=%s/vg.%%p.log %s "$$@"\n' \
	    "$(abspath $(MEMCHECK_DIR))" "$(abspath $(BIN))" >$(MEMCHECK_DIR)/holosim
	@chmod +x $(MEMCHECK_DIR)/holosim
	@echo "== tests/cli.sh with holosim under valgrind"
	@HOLOSIM=$(abspath $(MEMCHECK_DIR))/holosim sh tests/cli.sh >$(MEMCHECK_DIR)/cli.log 2>&1; \
	    echo "cli.sh under valgrind (its verdict is not the memcheck's): $$(tail -n 1 $(MEMCHECK_DIR)/cli.log)"
	@bad=$$(grep -l . $(MEMCHECK_DIR)/vg.*.log 2>/dev/null || true); \
	runs=$$(ls $(MEMCHECK_DIR)/vg.*.log 2>/dev/null | wc -l); \
	if [ -n "$$bad" ]; then for f in $$bad; do echo "--- $$f"; cat $$f; done; \
	    echo "memcheck: valgrind errors in $$(echo "$$bad" | wc -l) of $$runs holosim runs"; exit 1; fi; \
	echo "memcheck: no valgrind error in $$runs holosim runs"

-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_BIN:=.d)
