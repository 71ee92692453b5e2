package oomclassifier

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The product name that spec_totals is keyed by is hw.model; hw.name is a short name
// ("GPU 3") except from agents older than hw.model, where it is the product name.
func TestGPUResourceProductName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		attrs [][2]string
		want  string
	}{
		{"hw.model wins", [][2]string{{resHWName, "GPU 3"}, {resHWModel, "NVIDIA H100 80GB HBM3"}}, "NVIDIA H100 80GB HBM3"},
		{"order does not matter", [][2]string{{resHWModel, "NVIDIA H100 80GB HBM3"}, {resHWName, "GPU 3"}}, "NVIDIA H100 80GB HBM3"},
		{"older agent", [][2]string{{resHWName, "NVIDIA A100-SXM4-40GB"}}, "NVIDIA A100-SXM4-40GB"},
		{"neither", [][2]string{{attrHWID, "GPU-1"}}, ""},
	} {
		res := pcommon.NewMap()
		for _, kv := range tc.attrs {
			res.PutStr(kv[0], kv[1])
		}
		_, info := gpuResource(res)
		assert.Equal(t, tc.want, info.Name, tc.name)
	}
}
