package podresources

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

const (
	// DefaultRefreshInterval is how often the kubelet is asked: allocations
	// change when pods start and stop, seconds apart at the fastest, and the
	// kubelet rate-limits this API, so a List per scrape (1 s) buys nothing.
	DefaultRefreshInterval = 10 * time.Second
	// DefaultCallTimeout bounds one List (and GetAllocatableResources) on the
	// scraper's goroutine: a local socket answers in milliseconds, so a
	// kubelet slower than this is stuck and the scrape goes on without it.
	DefaultCallTimeout = 2 * time.Second
)

// Options configure a Source.
type Options struct {
	// SocketPath is the kubelet's PodResources socket; "" turns the API off.
	SocketPath string
	// PodLogsDir is the kubelet's pod log directory (/var/log/pods); its
	// sibling "containers" is read too. "" turns the names from it off.
	PodLogsDir string
	// RefreshInterval is the least time between two refreshes; <= 0 means the default.
	RefreshInterval time.Duration
	// CallTimeout bounds one refresh's calls; <= 0 means the default.
	CallTimeout time.Duration
	Logger      *zap.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Source keeps the kubelet's view of which pod holds which GPU, and the
// pod names the kubelet's log directories give, refreshed on demand.
//
// Refresh runs on the caller's goroutine (the scraper's) when the last one is
// older than the refresh interval, rather than on a ticker goroutine of its
// own: there is no goroutine to own and stop, no refresh while nothing
// scrapes, and tests drive it with a clock. The cost is that one scrape per
// interval also pays the List, milliseconds on a local socket and at most
// CallTimeout when the kubelet hangs; failures wait a full interval too, so a
// hung kubelet delays one scrape per interval, never every scrape.
type Source struct {
	opts Options
	log  *zap.Logger

	snap atomic.Pointer[Snapshot]
	logs atomic.Pointer[logIndex]

	mu      sync.Mutex // serialises refreshes; guards everything below
	client  *client
	next    time.Time
	closed  bool
	state   apiState
	lastErr string
	logsOK  bool // the pod log directory was readable at the last scan
	logsSet bool // logsOK has been reported once
	cut     bool // truncation has been reported
	over    bool // the last List held more allocations on a device than MaxDeviceAllocations
}

type apiState int

const (
	stateNew    apiState = iota
	stateOff             // SocketPath is ""
	stateAbsent          // the socket does not exist (yet)
	stateOK
	stateFailing
)

// NewSource prepares a Source; it does no I/O until Start or Refresh.
func NewSource(opts Options) *Source {
	if opts.RefreshInterval <= 0 {
		opts.RefreshInterval = DefaultRefreshInterval
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Source{opts: opts, log: opts.Logger}
	s.snap.Store(emptySnapshot)
	s.logs.Store(emptyLogIndex)
	return s
}

// Start reads the kubelet once, so the first scrape has allocations. A socket
// that does not exist is no error: allocations stay off until it appears.
func (s *Source) Start(ctx context.Context) error {
	s.refresh(ctx, true)
	return nil
}

// Refresh asks the kubelet and rescans the log directories when the last
// refresh is older than the refresh interval; otherwise it only reads the clock.
func (s *Source) Refresh(ctx context.Context) { s.refresh(ctx, false) }

func (s *Source) refresh(ctx context.Context, force bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	if s.closed || (!force && now.Before(s.next)) {
		return
	}
	s.next = now.Add(s.opts.RefreshInterval)
	s.refreshAPI(ctx)
	s.refreshLogs()
}

func (s *Source) refreshAPI(ctx context.Context) {
	path := s.opts.SocketPath
	if path == "" {
		if s.state == stateNew {
			s.log.Info("Kubernetes pod allocations off: pod_resources_socket is empty")
			s.state = stateOff
		}
		return
	}
	if s.client == nil {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if s.state == stateNew {
				s.log.Info("Kubernetes pod allocations off until the kubelet's PodResources socket appears",
					zap.String("pod_resources_socket", path),
					zap.String("hint", "mount /var/lib/kubelet/pod-resources read-only into the collector's pod"))
			}
			s.state = stateAbsent
			return
		}
	}
	// The kubelet is probed without gRPC before each List (probe.go: a connect and the HTTP/2
	// preface, well under a millisecond), and while it does not answer no gRPC client is kept:
	// gRPC's client logs each failed connection attempt, in the background and for ever.
	if err := probe(path, s.opts.CallTimeout); err != nil {
		s.dropClient()
		s.fail(err)
		return
	}
	if s.client == nil {
		c, err := newClient(path, s.opts.CallTimeout, s.opts.RefreshInterval)
		if err != nil {
			s.fail(err)
			return
		}
		s.client = c
	}
	list, alloc, allocErr, err := s.client.list(ctx)
	if err != nil {
		s.dropClient()
		s.fail(err)
		return
	}
	if allocErr != nil {
		if s.client.noAllocatable {
			s.log.Info("The kubelet has no GetAllocatableResources; allocations are read without the allocatable device list",
				zap.Error(allocErr))
		} else {
			s.log.Debug("PodResources GetAllocatableResources failed", zap.Error(allocErr))
		}
	}
	snap := BuildSnapshot(list, alloc, s.opts.Now())
	s.snap.Store(snap)
	if over := snap.Dropped() > 0; over != s.over {
		if over {
			s.log.Warn("The kubelet lists more allocations on one GPU than a GPU can hold; those past the bound are left out",
				zap.String("pod_resources_socket", path), zap.Int("dropped", snap.Dropped()), zap.Int("max_per_device", MaxDeviceAllocations))
		}
		s.over = over
	}
	switch s.state {
	case stateFailing:
		s.log.Info("Kubernetes pod allocations recovered: PodResources List answers again", zap.String("pod_resources_socket", path))
	case stateAbsent:
		s.log.Info("Kubernetes pod allocations on: the PodResources socket appeared", zap.String("pod_resources_socket", path))
	case stateNew:
		s.log.Info("Kubernetes pod allocations on", zap.String("pod_resources_socket", path))
	}
	s.state, s.lastErr = stateOK, ""
}

// dropClient closes the gRPC client, so that it stops reconnecting (and logging) while the
// kubelet does not answer; the next refresh probes first.
func (s *Source) dropClient() {
	if s.client != nil {
		_ = s.client.close()
		s.client = nil
	}
}

// fail reports the transition to failing once, with its reason; while it keeps failing,
// for that reason or another (a hung kubelet times out, then refuses, then its socket is
// gone), it is logged at debug only: one line per state change. The last good snapshot
// stays in place, its age in nvidia.gpu.allocation.age: pods rarely move in one interval.
func (s *Source) fail(err error) {
	if s.state == stateFailing {
		if err.Error() != s.lastErr {
			s.log.Debug("Kubernetes pod allocations still unavailable", zap.Error(err))
			s.lastErr = err.Error()
		}
		return
	}
	s.log.Warn("Kubernetes pod allocations unavailable: keeping the last good answer",
		zap.String("pod_resources_socket", s.opts.SocketPath), zap.Error(err),
		zap.Time("last_good", s.snap.Load().Taken()))
	s.state, s.lastErr = stateFailing, err.Error()
}

func (s *Source) refreshLogs() {
	if s.opts.PodLogsDir == "" {
		return
	}
	x := scanLogDirs(s.opts.PodLogsDir)
	s.logs.Store(x)
	if ok := x.podsErr == nil; !s.logsSet || ok != s.logsOK {
		if ok {
			s.log.Info("Pod names from the kubelet's log directories on", zap.String("pod_logs_dir", s.opts.PodLogsDir))
		} else {
			s.log.Info("Pod names from the kubelet's log directories off until the directory can be read",
				zap.String("pod_logs_dir", s.opts.PodLogsDir), zap.Error(x.podsErr))
		}
		s.logsOK, s.logsSet = ok, true
	}
	if x.truncated && !s.cut {
		s.log.Warn("The kubelet's log directories hold more entries than are read; some pods go unnamed",
			zap.String("pod_logs_dir", s.opts.PodLogsDir), zap.Int("max_pods", maxPodDirs), zap.Int("max_containers", maxContainerLog))
		s.cut = true
	}
}

// Snapshot returns the last good allocations; never nil.
func (s *Source) Snapshot() *Snapshot { return s.snap.Load() }

// Replace puts a resolved snapshot (Snapshot.Resolve) in place of the one it
// was made from, so Lookup names containers through it too. It does nothing
// when a refresh has stored a newer answer meanwhile.
func (s *Source) Replace(from, resolved *Snapshot) {
	s.snap.CompareAndSwap(from, resolved)
}

// Shutdown closes the connection. Safe without Start, and more than once;
// no refresh runs after it.
func (s *Source) Shutdown(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.client == nil {
		return nil
	}
	c := s.client
	s.client = nil
	return c.close()
}
