package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// workerEnv marks a worker process, for a test binary standing in for the
// program (its TestMain runs the worker).
const workerEnv = "FLEET_WORKER"

// startWorkers re-executes this program as cfg.workers workers, waits for
// them (killing them if ctx ends) and returns their reports, in order.
func startWorkers(ctx context.Context, cfg config, url, key string) ([]report, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	reports := make([]report, cfg.workers)
	errs := make([]error, cfg.workers)
	var wg sync.WaitGroup
	for i := range cfg.workers {
		id := i + 1
		cmd := exec.CommandContext(ctx, exe, "-worker", "-worker-id", strconv.Itoa(id), "-url", url, "-key", key,
			"-redis", cfg.redis, "-rate", strconv.Itoa(cfg.rate), "-per", cfg.per.String(),
			"-margin", strconv.FormatFloat(cfg.margin, 'f', -1, 64), "-n", strconv.Itoa(cfg.requests),
			"-workers", strconv.Itoa(cfg.workers), "-timeout", cfg.timeout.String(), "-fallback="+strconv.FormatBool(cfg.fallback))
		cmd.Env = append(os.Environ(), workerEnv+"=1")
		cmd.WaitDelay = 5 * time.Second
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Start(); err != nil {
			errs[i] = fmt.Errorf("worker %d: %w", id, err)
			continue
		}
		wg.Go(func() {
			if err := cmd.Wait(); err != nil {
				errs[i] = fmt.Errorf("worker %d: %w: %s", id, err, strings.TrimSpace(stderr.String()))
				return
			}
			if err := json.Unmarshal(out.Bytes(), &reports[i]); err != nil {
				errs[i] = fmt.Errorf("worker %d: bad report %q: %w", id, out.String(), err)
			}
		})
	}
	wg.Wait()
	return reports, errors.Join(errs...)
}
