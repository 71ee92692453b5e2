package nvmlx

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMIGProfile(t *testing.T) {
	for name, want := range map[string]string{
		"NVIDIA A100-SXM4-40GB MIG 1g.5gb":     "1g.5gb",
		"NVIDIA H100 80GB HBM3 MIG 1c.3g.40gb": "1c.3g.40gb",
		"NVIDIA H100 80GB HBM3 MIG 1g.10gb+me": "1g.10gb+me",
		"NVIDIA H100 80GB HBM3":                "",
		"MIG ":                                 "",
		"Odd MIG two words":                    "",
	} {
		assert.Equal(t, want, migProfile(name), name)
	}
}
