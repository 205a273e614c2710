# The everyday commands, over CMake presets (build/<preset>). `make run` and `make test` are the two
# the README promises; both install missing Debian packages first.
JOBS ?= $(shell nproc)
ORDO := build/release/apps/ordo/ordo
SHARED ?= ../shared

.PHONY: all deps release ordo install dev run test studies study-replay study-horizon study-noise study-weeks study-tenants study-preempt test-slow test-slurm bench measurements forecast-eval format format-check tidy clean

all: release

deps:
	@scripts/install-deps.sh

release: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

dev: deps
	@cmake --preset dev >/dev/null
	@cmake --build --preset dev -j $(JOBS)

# Only the binary (no tests or benchmarks): what `make run` and the studies need.
ordo: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS) --target ordo

# The binary, its man page and its bash completion under PREFIX (DESTDIR is honoured), by CMake's
# install rules: the same as `cmake --install build/release --prefix PREFIX` (docs/cli.md).
PREFIX ?= /usr/local
install: ordo
	@cmake --build --preset release -j $(JOBS) --target ordo_help_files
	@cmake --install build/release --prefix $(PREFIX)

# The main job: every policy on the built-in scenarios, the report in report/.
run: ordo
	@$(ORDO) compare scenarios/*.json --report-dir report
	@echo "report: report/report.html and report/report.md"

# Every fast test (unit, property, scenario, e2e), under ASan/UBSan.
test: dev
	@ctest --preset dev

# The real-Slurm end-to-end tests (ctest label slurm): installs Slurm from Debian, starts a test
# cluster on this machine, runs them against it and stops exactly what it started (docs/slurm.md).
test-slurm:
	@scripts/install-deps.sh slurmctld slurmd slurm-client
	@$(MAKE) --no-print-directory dev
	@scripts/slurm/test.sh build/dev

# Long soaks and big instances, on the release build.
test-slow: release
	@ctest --preset slow

bench: release
	@build/release/bench/ordo_bench --benchmark_counters_tabular=true

# docs/measurements.md, every figure with the command that produced it: the release build of what it
# runs, then scripts/measurements.sh (a few minutes; MEASUREMENTS_FLAGS=--with-studies adds the
# simulator's replay, horizon and noise studies).
measurements: deps
	@scripts/install-deps.sh jq time
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS) --target ordo ordo_bench forecast_eval ordo_property_test
	@scripts/measurements.sh --shared $(SHARED) $(MEASUREMENTS_FLAGS)

# The forecasters' evaluation on the real traces in ../shared/data (docs/forecasting.md): the
# demand forecaster's rolling-origin evaluation, then the training and quantization tables.
forecast-eval: release
	@if [ ! -d $(SHARED)/data ]; then echo "$(SHARED)/data not found: forecast evaluation skipped"; exit 0; fi; \
	build/release/apps/ordo/ordo forecast eval --data $(SHARED)/data && \
	build/release/bench/forecast_eval $(SHARED)/data --section training && \
	build/release/bench/forecast_eval $(SHARED)/data --section quantization

# The simulator's studies (docs/simulator.md): seven-day trace replay, plan-once vs rolling,
# forecast-error sweeps, starvation over four weeks, tenant fair share. Worlds and outputs go to
# build/studies/.
study-replay study-horizon study-noise study-weeks study-tenants study-preempt: ordo
	@scripts/studies.sh $(abspath $(ORDO)) $(SHARED)/data build/studies $(@:study-%=%)

studies: ordo
	@scripts/studies.sh $(abspath $(ORDO)) $(SHARED)/data build/studies replay horizon noise

# The house style (.clang-format) and the static checks (.clang-tidy), with pinned versions.
# format-check and tidy fail on any difference or finding; .ci/run runs both.
CLANG_FORMAT := clang-format-16
CLANG_TIDY := run-clang-tidy-16
SOURCES = $$(git ls-files '*.h' '*.cc')

format:
	@scripts/install-deps.sh clang-format-16
	@$(CLANG_FORMAT) -i $(SOURCES)

format-check:
	@scripts/install-deps.sh clang-format-16
	@$(CLANG_FORMAT) --dry-run -Werror $(SOURCES) && echo "format: clean"

# Over the dev build's compile commands (no second compilation): every source of src/ and apps/.
tidy: deps
	@scripts/install-deps.sh clang-tidy-16
	@cmake --preset dev >/dev/null
	@$(CLANG_TIDY) -p build/dev -j $(JOBS) -quiet \
	  '$(CURDIR)/(src|apps)/.*\.cc$$' >build/tidy.log 2>&1 \
	  && echo "tidy: clean" || { grep -E "(warning|error):" build/tidy.log | sort -u; exit 1; }

clean:
	@rm -rf build
