package oomclassifier

import (
	"math"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
)

// Names of the gpu_mem receiver's predicted-OOM records (docs/metrics.md).
const (
	eventOOMPredicted    = "nvidia.gpu.memory.oom_predicted"
	attrRunway           = "nvidia.gpu.memory.runway"
	attrGrowth           = "nvidia.gpu.memory.growth"
	attrProcessGrowth    = "nvidia.gpu.process.memory.growth"
	maxPredictionsPerGPU = 8    // one per episode: a GPU has a few in a window at most
	maxPredictionGPUs    = 4096 // across hosts; past it the oldest forecasts are dropped
)

// receiverPrediction reads a predicted-OOM record as leak evidence. The record itself is
// never changed: it passes on as it came.
func receiverPrediction(rec plog.LogRecord, res pcommon.Map) (string, classify.Prediction, bool) {
	attrs := rec.Attributes()
	if eventName(rec) != eventOOMPredicted {
		return "", classify.Prediction{}, false
	}
	hwID := str(res, attrHWID)
	secs := double(attrs, attrRunway)
	if hwID == "" || !(secs >= 0) || secs > float64(math.MaxInt64/int64(time.Second)) {
		return "", classify.Prediction{}, false // not one this processor can place or trust
	}
	p := classify.Prediction{
		T: recordTime(rec), Runway: time.Duration(secs * float64(time.Second)),
		Rate: max(double(attrs, attrGrowth), 0), PID: integer(attrs, attrProcessPID),
		Name: str(attrs, attrProcessName), ProcessRate: max(double(attrs, attrProcessGrowth), 0),
		ContainerID: str(attrs, attrContainerID), PodUID: str(attrs, attrPodUID),
	}
	return hwID, p, true
}

// double returns a finite number attribute, NaN when absent or not a number.
func double(m pcommon.Map, key string) float64 {
	v, ok := m.Get(key)
	if !ok {
		return math.NaN()
	}
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		if d := v.Double(); !math.IsInf(d, 0) {
			return d
		}
	case pcommon.ValueTypeInt:
		return float64(v.Int())
	}
	return math.NaN()
}

// predictions keeps the recent forecasts per host and GPU, bounded in count and by the
// window, for the OOMs that follow them.
type predictions struct {
	window time.Duration

	mu    sync.Mutex
	byGPU map[predictionKey][]classify.Prediction
}

type predictionKey struct{ host, hwID string }

func newPredictions(window time.Duration) *predictions {
	return &predictions{window: window, byGPU: map[predictionKey][]classify.Prediction{}}
}

func (s *predictions) observe(host, hwID string, p classify.Prediction) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := predictionKey{host, hwID}
	list, ok := s.byGPU[k]
	if !ok && len(s.byGPU) >= maxPredictionGPUs {
		s.prune(p.T)
		if len(s.byGPU) >= maxPredictionGPUs {
			return
		}
	}
	if len(list) >= maxPredictionsPerGPU {
		list = append(list[:0], list[1:]...)
	}
	s.byGPU[k] = append(list, p)
}

// prune drops forecasts older than the window before now; the lock is held.
func (s *predictions) prune(now time.Time) {
	for k, list := range s.byGPU {
		if len(list) == 0 || now.Sub(list[len(list)-1].T) > s.window {
			delete(s.byGPU, k)
		}
	}
}

// ForGPU appends the forecasts for the GPU made within the window before at.
func (s *predictions) ForGPU(dst []classify.Prediction, host, hwID string, at time.Time) []classify.Prediction {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.byGPU[predictionKey{host, hwID}] {
		if !p.T.After(at) && at.Sub(p.T) <= s.window {
			dst = append(dst, p)
		}
	}
	return dst
}
