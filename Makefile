# Thin entry points. `make run` and `make test` install what is missing (tools/bootstrap.sh),
# configure with the CMake presets and build.
SCENE ?= scenes/point_drop.lua
JOBS ?= 2

.PHONY: run test build tsan bench bootstrap format clean

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

tsan: bootstrap
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan
	@ctest --preset tsan

bench: build
	@build/issim-bench all

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-tsan
