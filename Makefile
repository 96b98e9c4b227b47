# holosim: GNU Make build.
#   make            build bin/holosim and lib/libholosim.{so,a} (installs missing
#                   Debian packages first)
#   make run        build and run models/pendulum.yaml (first lines of the CSV)
#   make check      build and run every test
#   make check SANITIZE=1   the same under AddressSanitizer + UBSan
#   make bench      build and run the benchmarks in bench/
#   make install PREFIX=/usr/local ; make uninstall PREFIX=...

CC      ?= cc
PREFIX  ?= /usr/local
VERSION := 0.1.0

WARN    = -Wall -Wextra -Werror -Wshadow -Wundef -Wwrite-strings \
          -Wmissing-prototypes -Wstrict-prototypes -Wold-style-definition \
          -Wdouble-promotion -Wno-error=unused-function
OPT     = -O2 -g
ifeq ($(SANITIZE),1)
BUILD   = build/san
OPT     = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
          -fno-sanitize-recover=all
SANLD   = -fsanitize=address,undefined
else
BUILD   = build/rel
endif

# Lazily expanded: evaluated when a recipe runs, after deps are installed.
PKGS      = gsl yaml-0.1
DEP_CFLAGS = $(shell pkg-config --cflags $(PKGS))
# GSL's CBLAS interface: OpenBLAS built single-threaded (Debian's
# libopenblas-serial-dev, found by its directory and run from there) when
# installed, several times faster than GSL's reference libgslcblas (the
# fallback) on the dense analysis near its n + k limit.
OPENBLAS_DIR = /usr/lib/$(shell $(CC) -print-multiarch 2>/dev/null)/openblas-serial
OPENBLAS_LIBS = -L$(OPENBLAS_DIR) -Wl,-rpath,$(OPENBLAS_DIR) -lopenblas
BLAS_LIBS  = $(if $(wildcard $(OPENBLAS_DIR)/libopenblas.so),$(OPENBLAS_LIBS),-lgslcblas)
# ... and its LAPACK (src/analysis/modes.c: the symmetric eigensolver)
BLAS_CFLAGS = $(if $(wildcard $(OPENBLAS_DIR)/libopenblas.so),-DHS_HAVE_LAPACK)
# cairo (Debian's libcairo2-dev), optional: the still figures of `holosim
# animate -o fig.svg|pdf|png` (src/io/figure.c).  Without it (or with
# CAIRO=0) the build works and those outputs are refused with a message.
# Not linked: figure.c opens libcairo.so.2 at the first figure (dlopen), as
# linalg/spd.c opens CHOLMOD (libsuitesparse-dev) at the first large sparse model.
CAIRO ?= auto
HAVE_CAIRO = $(if $(filter 0,$(CAIRO)),,$(shell pkg-config --exists cairo 2>/dev/null && echo 1))
CAIRO_CFLAGS = $(if $(HAVE_CAIRO),-DHS_HAVE_CAIRO $(shell pkg-config --cflags cairo))
DEP_LIBS   = $(filter-out -lgslcblas,$(shell pkg-config --libs $(PKGS))) -lklu $(BLAS_LIBS) \
             -lm
CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS   = $(shell pkg-config --libs check)

CFLAGS_ALL = -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) $(WARN) -MMD -MP \
             -DHS_VERSION='"$(VERSION)"' $(DEP_CFLAGS) $(BLAS_CFLAGS) $(CAIRO_CFLAGS) \
             $(CFLAGS)

SRC      := $(wildcard src/*/*.c)
MAIN_SRC := $(wildcard src/cli/*.c)
LIB_SRC  := $(filter-out $(MAIN_SRC),$(SRC))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(MAIN_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/check_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BIN      := $(if $(filter 1,$(SANITIZE)),$(BUILD)/holosim,bin/holosim)
STAMP    := build/.deps-ok

.PHONY: all run check deps bench install uninstall clean fuzz lib
all: $(BIN) lib

$(STAMP): scripts/install-deps.sh
	@mkdir -p build
	@sh scripts/install-deps.sh
	@touch $@
deps: $(STAMP)
# The tests also need gnuplot, GNU parallel, rsync and groff (scripts, man pages).
build/.deps-full: scripts/install-deps.sh
	@mkdir -p build
	@HOLOSIM_FULL_DEPS=1 sh scripts/install-deps.sh
	@touch $@

$(BUILD)/%.o: %.c | $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libholosim.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(MAIN_OBJ) $(BUILD)/libholosim.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(SANLD) -o $@ $^ $(DEP_LIBS) $(LDFLAGS)

$(BUILD)/tests/%: tests/%.c $(BUILD)/libholosim.a | $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(CHECK_CFLAGS) -Isrc -o $@ $< $(BUILD)/libholosim.a \
	    $(SANLD) $(CHECK_LIBS) $(DEP_LIBS)

# holosim with every allocation it makes countable and failable
# (tests/oom/shim.c, run by tests/cli_oom.sh)
OOM_WRAP := $(foreach f,malloc calloc realloc strdup strndup,-Wl,--wrap=$(f))
$(BUILD)/tests/holosim_oom: tests/oom/shim.c $(MAIN_OBJ) $(BUILD)/libholosim.a | $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(SANLD) $(OOM_WRAP) $(DEP_LIBS) $(LDFLAGS)

# libholosim (include/holosim.h, src/api): the objects of every layer but
# cli compiled again with -fPIC and hidden visibility into their own
# directory (bin/holosim's objects stay as they are); only the holosim_
# functions (HOLOSIM_API) are exported.  lib/libholosim.so.$(VERSION), soname
# libholosim.so.$(SOMAJOR), and lib/libholosim.a.
SOMAJOR  := 0
PIC      := build/rel/pic
# the release flags whatever SANITIZE says (a host process, Python, cannot
# load a library built with AddressSanitizer)
CFLAGS_REL = $(filter-out $(OPT),$(CFLAGS_ALL)) -O2 -g
PIC_OBJ  := $(LIB_SRC:%.c=$(PIC)/%.o)
SHLIB    := lib/libholosim.so.$(VERSION)
lib: $(SHLIB) lib/libholosim.so.$(SOMAJOR) lib/libholosim.so lib/libholosim.a

$(PIC)/%.o: %.c | $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_REL) -fPIC -fvisibility=hidden -c $< -o $@

$(SHLIB): $(PIC_OBJ)
	@mkdir -p lib
	$(CC) -shared -Wl,-soname,libholosim.so.$(SOMAJOR) -Wl,--no-undefined -o $@ $^ \
	    $(DEP_LIBS) -lpthread $(LDFLAGS)
lib/libholosim.so.$(SOMAJOR) lib/libholosim.so: $(SHLIB)
	ln -sf $(notdir $(SHLIB)) $@
lib/libholosim.a: $(PIC_OBJ)
	@mkdir -p lib
	@rm -f $@
	ar rcs $@ $^

# The library's C tests (tests/api_*.c), built against include/holosim.h
# and lib/libholosim.so the way a user's program is.
API_TEST_BIN := $(patsubst tests/%.c,build/rel/tests/%,$(wildcard tests/api_*.c))
build/rel/tests/api_%: tests/api_%.c $(SHLIB) lib/libholosim.so | $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_REL) -Iinclude -o $@ $< -Llib -Wl,-rpath,$(abspath lib) -lholosim \
	    $(DEP_LIBS) -lpthread

run: $(BIN)
	$(BIN) run models/pendulum.yaml --t-end 2 --dt 0.1 --columns t,x,y,lambda_rod,E

# Every Check suite, the layer check, then the command-line tests
# (tests/cli.sh and every tests/cli_*.sh) and the script tests.
CLI_TESTS := $(filter-out tests/cli_lib.sh,$(wildcard tests/cli.sh tests/cli_*.sh))
# native builds that test runs start go to the build tree, not the user's cache
check: export HOLOSIM_CACHE = $(abspath $(BUILD))/cache
check: export HOLOSIM_OOM = $(abspath $(BUILD))/tests/holosim_oom
# LeakSanitizer: fontconfig's process-long caches (cairo's fonts) are not ours
check: export LSAN_OPTIONS = suppressions=$(abspath tests/lsan.supp):print_suppressions=0
# The library and the Python package: tests/api.sh (the library is the
# release build also under SANITIZE=1).
check: $(BIN) $(TEST_BIN) $(BUILD)/tests/holosim_oom build/.deps-full lib $(API_TEST_BIN)
	@set -e; for t in $(TEST_BIN); do echo "== $$t"; $$t; done
	@sh tests/layers.sh
	@set -e; for s in $(CLI_TESTS); do echo "== $$s"; HOLOSIM=$(BIN) sh $$s; done
	@if [ -f tests/scripts.sh ]; then echo "== tests/scripts.sh"; HOLOSIM=$(abspath $(BIN)) sh tests/scripts.sh; fi
	@echo "== tests/scripts_plot.sh"; HOLOSIM=$(abspath $(BIN)) sh tests/scripts_plot.sh
	@echo "== tests/api.sh"; \
	    HOLOSIM=$(abspath $(BIN)) API_BIN="$(abspath $(API_TEST_BIN))" sh tests/api.sh

bench: $(BIN)
	$(MAKE) -C bench HOLOSIM=$(abspath $(BIN))

# bin/holosim, the scripts as holosim-sweep and holosim-plot, the manuals
# (holosim(1), holosim-model(5), and the scripts' pages when man/ has them);
# uninstall removes exactly these files.
# The library: lib/libholosim.so.$(VERSION) with its two links and
# libholosim.a, include/holosim.h, lib/pkgconfig/holosim.pc, and the Python
# package under lib/python3/dist-packages/holosim (which finds the library
# two directories up).
MANDIR      = $(DESTDIR)$(PREFIX)/share/man
SCRIPT_MANS = $(wildcard man/holosim-sweep.1 man/holosim-plot.1)
LIBDIR      = $(DESTDIR)$(PREFIX)/lib
PYDIR       = $(LIBDIR)/python3/dist-packages/holosim
PY_FILES    = __init__.py _lib.py _motion.py
install: bin/holosim lib
	install -d $(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include $(PYDIR)
	install -m 755 $(SHLIB) $(LIBDIR)/
	ln -sf $(notdir $(SHLIB)) $(LIBDIR)/libholosim.so.$(SOMAJOR)
	ln -sf $(notdir $(SHLIB)) $(LIBDIR)/libholosim.so
	install -m 644 lib/libholosim.a $(LIBDIR)/
	install -m 644 include/holosim.h $(DESTDIR)$(PREFIX)/include/holosim.h
	printf '%s\n' 'prefix=$(abspath $(PREFIX))' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	    'Name: holosim' 'Description: mechanical systems under holonomic constraints (libholosim)' \
	    'Version: $(VERSION)' 'Cflags: -I$${includedir}' \
	    'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lholosim' \
	    'Libs.private: $(strip $(DEP_LIBS)) -lpthread' >$(LIBDIR)/pkgconfig/holosim.pc
	install -m 644 $(addprefix python/holosim/,$(PY_FILES)) $(PYDIR)/
	install -d $(DESTDIR)$(PREFIX)/bin $(MANDIR)/man1 $(MANDIR)/man5
	install -m 755 bin/holosim $(DESTDIR)$(PREFIX)/bin/holosim
	install -m 755 scripts/sweep $(DESTDIR)$(PREFIX)/bin/holosim-sweep
	install -m 755 scripts/plot $(DESTDIR)$(PREFIX)/bin/holosim-plot
	install -m 644 man/holosim.1 $(SCRIPT_MANS) $(MANDIR)/man1/
	install -m 644 man/holosim-model.5 $(MANDIR)/man5/holosim-model.5

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/holosim $(DESTDIR)$(PREFIX)/bin/holosim-sweep \
	    $(DESTDIR)$(PREFIX)/bin/holosim-plot $(MANDIR)/man1/holosim.1 \
	    $(MANDIR)/man1/holosim-sweep.1 $(MANDIR)/man1/holosim-plot.1 \
	    $(MANDIR)/man5/holosim-model.5
	rm -f $(LIBDIR)/$(notdir $(SHLIB)) $(LIBDIR)/libholosim.so.$(SOMAJOR) \
	    $(LIBDIR)/libholosim.so $(LIBDIR)/libholosim.a $(LIBDIR)/pkgconfig/holosim.pc \
	    $(DESTDIR)$(PREFIX)/include/holosim.h $(addprefix $(PYDIR)/,$(PY_FILES))
	rm -rf $(PYDIR)/__pycache__
	-rmdir $(PYDIR) 2>/dev/null || true

clean:
	rm -rf build bin lib

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(TEST_BIN:=.d) $(PIC_OBJ:.o=.d) \
    $(API_TEST_BIN:=.d)

# Fuzzing (libFuzzer, clang), replay of the fuzz corpora and findings,
# valgrind memcheck: tests/fuzz/README.md.
include tests/fuzz/fuzz.mk
