# A thin wrapper over meson. `make demo` and `make test` are all a fresh Debian 12 machine needs.
BUILD ?= build
PREFIX ?= /usr/local
MESON_FLAGS ?=
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Exactly the Debian packages keyshard needs to build and test.
DEPS := g++ meson ninja-build pkg-config libcli11-dev libfmt-dev libsimdjson-dev libzstd-dev \
        doctest-dev libxxhash-dev zlib1g-dev libmd-dev librdkafka-dev zstd python3 time \
        groff-base man-db bash-completion zsh fish
# The peers the benchmark compares against.
BENCH_DEPS := mawk miller parallel
# libFuzzer, for `make fuzz`.
FUZZ_DEPS := clang libclang-rt-14-dev
FUZZ_SECONDS ?= 60

.PHONY: all deps bench-deps build test test-slow test-asan test-tsan fuzz demo bench install clean

all: build

deps:
	@./.ci/install-packages $(DEPS)

bench-deps:
	@./.ci/install-packages $(BENCH_DEPS)

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_FLAGS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

test: build
	@./.ci/run-tests $(BUILD)

# The long tests (the full crash test: 20 seeds of SIGKILL + resume over 120 MiB).
test-slow: build
	@./.ci/run-tests $(BUILD) --suite slow

# The same suites under AddressSanitizer + UBSan, and the end-to-end tests of the threaded
# pipeline (the "threads" suite: tests/meson.build) under ThreadSanitizer, assertions on. They
# build at -O1 with line tables only (-g1): enough for the sanitizers' stack traces, and about
# half the compile time of -O2 -g, most of which goes into debug information for templates. They
# build six sources at a time as one (a unity build), which takes a third off the time of the
# ASan build. (The command line is a unity build of two units in every build: src/meson.build.)
# UBSan leaves out its alignment check, a quarter of the ASan build's compile time: keyshard
# reads unaligned bytes only through memcpy, and x86-64 allows unaligned access (`make fuzz`,
# with clang, keeps the check).
SANITIZER_SETUP := -Db_lundef=false -Db_ndebug=false -Doptimization=1 -Ddebug=false \
                   -Dc_args=-g1 -Dunity=on -Dunity_size=6

test-asan: deps
	@[ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address,undefined \
	  $(SANITIZER_SETUP) -Dcpp_args='-g1 -fno-sanitize=alignment' $(MESON_FLAGS)
	@ninja -C build-asan && ./.ci/run-tests build-asan

test-tsan: deps
	@[ -f build-tsan/build.ninja ] || meson setup build-tsan -Db_sanitize=thread \
	  $(SANITIZER_SETUP) -Dcpp_args=-g1 $(MESON_FLAGS)
	@./.ci/run-tests build-tsan --suite threads

# Coverage-guided fuzzing of what keyshard reads from outside (NDJSON lines, input files plain or
# zstd, checkpoint files, -k values): each target of tests/fuzz for FUZZ_SECONDS, built with
# clang, ASan and UBSan. The test suite replays the saved inputs of every target; this looks for
# new ones. At -O2 for the fuzzer's speed, but with line tables only and as a unity build, as
# above: that builds in about half the time.
fuzz: deps
	@./.ci/install-packages $(FUZZ_DEPS)
	@[ -f build-fuzz/build.ninja ] || CXX=clang++ meson setup build-fuzz -Dfuzz=true \
	  -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=2 -Ddebug=false \
	  -Db_ndebug=false -Dunity=on -Dunity_size=6 -Dcpp_args=-g1 $(MESON_FLAGS)
	@ninja -C build-fuzz tests/fuzz/key_extraction_fuzz tests/fuzz/chunk_reader_fuzz \
	  tests/fuzz/checkpoint_codec_fuzz tests/fuzz/key_path_fuzz
	@./tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

demo: build
	@./samples/demo.sh $(BUILD)/src/keyshard

bench: build bench-deps
	@./bench/run.sh $(BUILD)

install: build
	meson configure $(BUILD) -Dprefix=$(PREFIX) >/dev/null
	meson install -C $(BUILD) $(if $(DESTDIR),--destdir $(DESTDIR))

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
