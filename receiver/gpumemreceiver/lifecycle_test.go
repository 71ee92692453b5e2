package gpumemreceiver

import (
	"context"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
)

func TestFactoryLifecycle(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Backend = node.Simulated
	cfg.Xid.KmsgPath = ""
	set := receivertest.NewNopSettings(metadata.Type)

	mr, err := f.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	lr, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)

	host := componenttest.NewNopHost()
	require.NoError(t, mr.Start(context.Background(), host))
	require.NoError(t, lr.Start(context.Background(), host))
	require.NoError(t, mr.Shutdown(context.Background()))
	require.NoError(t, lr.Shutdown(context.Background()))
	// The scraper controller is the collector's and is shut down once; our shared instance
	// tolerates a second shutdown from the other signal.
	require.NoError(t, lr.Shutdown(context.Background()), "shutdown twice")
}

func TestShutdownWithoutStart(t *testing.T) {
	f := NewFactory()
	set := receivertest.NewNopSettings(metadata.Type)
	mr, err := f.CreateMetrics(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, mr.Shutdown(context.Background()))
	lr, err := f.CreateLogs(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, lr.Shutdown(context.Background()))
}

// One instance per component ID serves both signals.
func TestSharedInstance(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig()
	set := receivertest.NewNopSettings(metadata.Type)
	lr1, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	lr2, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	assert.Same(t, lr1, lr2)
	require.NoError(t, lr1.Shutdown(context.Background()))
}

// statusHost records reported component status.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []*componentstatus.Event
}

func (h *statusHost) Report(e *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

func (h *statusHost) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []componentstatus.Status
	for _, e := range h.events {
		out = append(out, e.Status())
	}
	return out
}

// After a failed Init, go-nvml's other calls would crash the process: the gate must keep
// every call out until a retry succeeds, and the failure is a status, not a crash or an error
// per scrape.
func TestInitFailureKeepsTheGateShut(t *testing.T) {
	var mu sync.Mutex
	initRet := nvml.ERROR_LIBRARY_NOT_FOUND
	gpu := newFakeGPU(0)
	lib := newFakeNVML(gpu)
	lib.InitFunc = func() nvml.Return {
		mu.Lock()
		defer mu.Unlock()
		return initRet
	}
	// Any call past the gate while the library is down fails the test instead of crashing.
	deviceCount := lib.DeviceGetCountFunc
	lib.DeviceGetCountFunc = func() (int, nvml.Return) {
		mu.Lock()
		defer mu.Unlock()
		if initRet != nvml.SUCCESS {
			t.Error("DeviceGetCount called while NVML is down")
		}
		return deviceCount()
	}
	lib.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		mu.Lock()
		defer mu.Unlock()
		if initRet != nvml.SUCCESS {
			t.Error("EventSetCreate called while NVML is down")
		}
		return &mock.EventSet{
			WaitFunc: func(ms uint32) (nvml.EventData, nvml.Return) {
				time.Sleep(time.Duration(ms) * time.Millisecond)
				return nvml.EventData{}, nvml.ERROR_TIMEOUT
			},
			FreeFunc: func() nvml.Return { return nvml.SUCCESS },
		}, nvml.SUCCESS
	}

	cfg := createDefaultConfig().(*Config)
	cfg.Xid.KmsgPath = ""
	r := newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	r.newBackend = func(*Config) (node.Node, error) { return node.Node{Lib: lib, ProcFS: fstest.MapFS{}}, nil }
	r.retryMin = 10 * time.Millisecond
	host := &statusHost{Host: componenttest.NewNopHost()}
	require.NoError(t, r.Start(context.Background(), host), "a missing driver does not stop the collector")
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()

	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err, "no error per tick while NVML is down")
	assert.Zero(t, md.MetricCount())
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError}, host.statuses())

	mu.Lock()
	initRet = nvml.SUCCESS
	mu.Unlock()
	require.Eventually(t, r.sess.IsUp, 10*time.Second, 10*time.Millisecond)
	md, err = r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	assert.Positive(t, md.MetricCount())
	assert.Eventually(t, func() bool {
		s := host.statuses()
		return s[len(s)-1] == componentstatus.StatusOK
	}, 5*time.Second, 10*time.Millisecond)
}
