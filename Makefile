# Makefile - the short way in. Everything real is in CMakeLists.txt.
#   make demo   configure, build and run examples/demo.stc
#   make test   configure with -DSTC_WERROR=ON, build, run every test (ctest)
#   make asan   the same with AddressSanitizer + UBSan, in build-asan/
#   make tsan   the same with ThreadSanitizer (halt on the first report), in build-tsan/
#   make clean  remove the build directories

BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
CTEST ?= ctest

.PHONY: demo test asan tsan clean

demo:
	$(CMAKE) -S . -B $(BUILD)
	$(CMAKE) --build $(BUILD) -j $(JOBS)
	$(BUILD)/stc run examples/demo.stc

test:
	$(CMAKE) -S . -B $(BUILD) -DSTC_WERROR=ON
	$(CMAKE) --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && $(CTEST) --output-on-failure -j $(JOBS)

asan:
	$(CMAKE) -S . -B $(ASAN_BUILD) -DSTC_WERROR=ON -DCMAKE_BUILD_TYPE=Debug \
		-DSTC_SANITIZE=address,undefined
	$(CMAKE) --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && $(CTEST) --output-on-failure -j $(JOBS)

# TSan reports races as failures (no suppressions).
tsan:
	$(CMAKE) -S . -B $(TSAN_BUILD) -DSTC_WERROR=ON -DCMAKE_BUILD_TYPE=Debug -DSTC_SANITIZE=thread
	$(CMAKE) --build $(TSAN_BUILD) -j $(JOBS)
	cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1 $(CTEST) --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
