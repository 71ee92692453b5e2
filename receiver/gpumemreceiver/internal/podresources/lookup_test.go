package podresources

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/internal/simkubelet"
)

const (
	uidTwo   = "5f0c2a7e-3b1d-4e9a-8c6f-2d4b6a8c0e1f"
	uidNB    = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
	uidStray = "11111111-2222-4333-8444-555555555555"
	cidA     = "aaaa0000aaaa0000aaaa0000aaaa0000aaaa0000aaaa0000aaaa0000aaaa0000"
	cidOld   = "0ddc0ffee0ddc0ffee0ddc0ffee0ddc0ffee0ddc0ffee0ddc0ffee0ddc0ffee0"
)

// lookupNode: train-0 (main + sidecar on gpuA), "two" with two containers
// sharing gpuB, and nb on a replica of gpuC. The log tree names train-0's
// main container only; nb's container log link names an older pod.
func lookupNode(t *testing.T) *harness {
	podsDir := fakeLogTree(t,
		[]string{"ml_train-0_" + uidTrain, "ml_two_" + uidTwo, "dev_nb_" + uidNB},
		[]string{"train-0_ml_main-" + cidTrain + ".log", "nb-old_dev_jupyter-" + cidOld + ".log"})
	h := newHarness(t, simkubelet.Options{}, podsDir)
	h.kub.SetPods(append(trainPods, simkubelet.Pod{Namespace: "ml", Name: "two", Containers: []simkubelet.Container{
		{Name: "a", Devices: []simkubelet.Devices{{Resource: "nvidia.com/gpu", IDs: []string{gpuB}}}},
		{Name: "b", Devices: []simkubelet.Devices{{Resource: "nvidia.com/gpu", IDs: []string{gpuB}}}},
	}}))
	require.NoError(t, h.kub.Start(h.path))
	require.NoError(t, h.src.Start(context.Background()))
	return h
}

func TestLookupJoinOrder(t *testing.T) {
	h := lookupNode(t)
	s := h.src
	for _, tc := range []struct {
		name          string
		uid, cid, dev string
		want          Identity
	}{
		{"uid and container link", uidTrain, cidTrain, gpuA, Identity{"ml", "train-0", "main"}},
		{"container link alone", "", cidTrain, gpuA, Identity{"ml", "train-0", "main"}},
		{"uid, no link: the only container listing the device", uidTrain, cidA, gpuA, Identity{"ml", "train-0", "main"}},
		{"uid, no link, replica of a time-sliced GPU", uidNB, "", gpuC, Identity{"dev", "nb", "jupyter"}},
		{"stale link of another pod: uid wins", uidNB, cidOld, "", Identity{"dev", "nb", ""}},
		{"stale link, device decides", uidNB, cidOld, gpuC, Identity{"dev", "nb", "jupyter"}},
		{"two containers share the device", uidTwo, cidA, gpuB, Identity{"ml", "two", ""}},
		{"pod not allocated this device", uidTrain, "", gpuB, Identity{"ml", "train-0", ""}},
		{"unknown pod is never named from the device", uidStray, cidA, gpuA, Identity{}},
		{"nothing", "", "", "", Identity{}},
	} {
		assert.Equal(t, tc.want, s.Lookup(tc.uid, tc.cid, tc.dev), tc.name)
	}
	assert.Equal(t, uidTrain, s.PodUID("ml", "train-0"))
	assert.Empty(t, s.PodUID("ml", "nope"))
}

func TestLookupRescansLogDirs(t *testing.T) {
	h := lookupNode(t)
	assert.Equal(t, Identity{}, h.src.Lookup(uidStray, "", ""))
	fakePod(t, h.src.opts.PodLogsDir, "ml_late_"+uidStray)
	h.clk.advance(DefaultRefreshInterval / 2)
	h.src.Refresh(context.Background())
	assert.Equal(t, Identity{}, h.src.Lookup(uidStray, "", ""), "not before the interval")
	h.tick(t)
	assert.Equal(t, Identity{Namespace: "ml", Pod: "late"}, h.src.Lookup(uidStray, "", ""))
}
