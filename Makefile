# Thin entry points. `make run` and `make test` install what is missing (tools/bootstrap.sh),
# configure with the CMake presets and build.
SCENE ?= scenes/point_drop.lua
JOBS ?= 2
FUZZ_SECONDS ?= 60

.PHONY: run test build tsan fuzz bench bootstrap format clean

bootstrap:
	@tools/bootstrap.sh

build: bootstrap
	@cmake --preset release >/dev/null
	@cmake --build --preset release

run: build
	@tools/run-default.sh $(SCENE)

test: bootstrap
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan
	@ctest --preset asan
	@$(MAKE) --no-print-directory tsan
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=5

tsan: bootstrap
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan
	@ctest --preset tsan

# libFuzzer harnesses (tools/fuzz/README.md): clang build in build-fuzz/, the committed corpora
# run once (ctest), then each harness fuzzes for FUZZ_SECONDS; crashes in build-fuzz/crashes/.
fuzz: bootstrap
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz
	@ctest --preset fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tools/fuzz/run.sh

bench: build
	@build/issim-bench all

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-tsan build-fuzz
