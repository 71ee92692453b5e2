package parse

import (
	"path/filepath"
	"strings"
	"testing"
)

// heldOutGlob is the held-out split: public messages collected after
// the vocabulary was frozen (commit a86c6b7) from sources the corpus did not
// hold, scored before any recogniser change (testdata/oom/corpus/README.md,
// "Held-out split"). The entries also belong to the gated corpus once the
// recogniser was changed; this test reports the split on its own, by device
// kind, so the generalisation figure stays visible.
const heldOutGlob = "../../../../testdata/oom/corpus/heldout_*.jsonl"

// heldOutBatches are the held-out batches by id prefixes: h17- (heldout_frozen_vocabulary.jsonl,
// scored at commit a86c6b7), h17b- (heldout_second.jsonl, 72 messages collected
// later, scored on the recogniser of that time before it was changed), and
// the structure batch (hb- OOMs in boosting.jsonl, pytorch_hip_wrapped.jsonl
// and cuda_more.jsonl; hl- and hd- look-alikes in lookalikes_hostmem.jsonl and
// lookalikes_docs_code.jsonl), frozen and scored before the structure rules
// (testdata/oom/corpus/README.md, "Structure batch"), and the later batch
// (s2- ids in lookalikes_slurm_container.jsonl, lookalikes_talk_changelog.jsonl,
// lookalikes_code_diff.jsonl, lookalikes_pinned_host.jsonl and
// pytorch_tensorflow_reports.jsonl; README.md, "Third held-out batch").
var heldOutBatches = [...][]string{{"h17-"}, {"h17b-"}, {"hb-", "hl-", "hd-"}, {"s2-"}}

// TestHeldOutBatches prints recall and false positives on each held-out
// batch per device kind (the corpus's device_kind; "" where the text does not
// say). It does not gate: TestCitedCorpusAccuracy gates the whole corpus.
func TestHeldOutBatches(t *testing.T) {
	if files, _ := filepath.Glob(heldOutGlob); len(files) == 0 {
		t.Skipf("no held-out file at %s", heldOutGlob)
	}
	all := loadCited(t)
	for _, prefix := range heldOutBatches {
		var cases []citedCase
		for _, c := range all {
			for _, p := range prefix {
				if strings.HasPrefix(c.ID, p) {
					cases = append(cases, c)
				}
			}
		}
		rows := map[string]*tally{}
		var total tally
		for i := range cases {
			c := &cases[i]
			s, p := score(c)
			k := c.DeviceKind
			if !c.OOM {
				k = "(look-alikes)"
			} else if k == "" {
				k = "(unstated)"
			}
			if rows[k] == nil {
				rows[k] = &tally{}
			}
			rows[k].add(s)
			total.add(s)
			for _, l := range p {
				t.Log(l)
			}
		}
		t.Logf("held-out batch %s, %d entries (rows are device kinds):\n%s", strings.Join(prefix, "* ")+"*", len(cases), accuracyTable(rows, total))
	}
}
