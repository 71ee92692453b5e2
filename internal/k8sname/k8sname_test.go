package k8sname

import (
	"regexp"
	"testing"
)

var workloads = []struct{ pod, want string }{
	{"web-7d4b9c8f6-x2k9q", "web"},           // Deployment
	{"svc-api-6b5f8c7d9-qzv4w", "svc-api"},   // Deployment, dashes in the name
	{"trainer-x2k9q", "trainer"},             // Job, DaemonSet, bare ReplicaSet
	{"nightly-29012345-x2k9q", "nightly"},    // CronJob (schedule has 0, 1, 3)
	{"nightly-28456789-x2k9q", "nightly"},    // CronJob (schedule all in the alphabet)
	{"db-0", "db"},                           // StatefulSet
	{"kafka-broker-12", "kafka-broker"},      // StatefulSet
	{"train-3-x2k9q", "train-3"},             // indexed Job: one workload per index
	{"bert-large", "bert-large"},             // bare pod: vowels are never generated
	{"llama-70b", "llama-70b"},               // bare pod: '0' is never generated
	{"gpu-test", "gpu-test"},                 // bare pod
	{"x2k9q", "x2k9q"},                       // nothing before the segment
	{"-x2k9q", "-x2k9q"},                     // nothing before the dash
	{"a-bcdfgh-x2k9q", "a"},                  // hash of six
	{"a-bcdfghjklmn-x2k9q", "a-bcdfghjklmn"}, // eleven is no hash
	{"", ""},
}

func TestWorkload(t *testing.T) {
	for _, c := range workloads {
		if got := Workload(c.pod); got != c.want {
			t.Errorf("Workload(%q) = %q, want %q", c.pod, got, c.want)
		}
	}
}

// TestPromQLRegexpAgrees runs the regexp the way Prometheus' label_replace does (anchored at
// both ends, replacement "$1$2$3") and checks it names the same workload as Workload.
func TestPromQLRegexpAgrees(t *testing.T) {
	re := regexp.MustCompile("^(?s:" + PromQLWorkloadRegexp + ")$")
	for _, c := range workloads {
		if c.pod == "" {
			continue // label_replace leaves an unmatched (empty) label alone
		}
		m := re.FindStringSubmatchIndex(c.pod)
		if m == nil {
			t.Errorf("regexp does not match %q", c.pod)
			continue
		}
		got := string(re.ExpandString(nil, "$1$2$3", c.pod, m))
		if got != c.want {
			t.Errorf("label_replace(%q) = %q, want %q", c.pod, got, c.want)
		}
	}
}

func FuzzWorkloadAgreesWithPromQL(f *testing.F) {
	for _, c := range workloads {
		f.Add(c.pod)
	}
	re := regexp.MustCompile("^(?s:" + PromQLWorkloadRegexp + ")$")
	f.Fuzz(func(t *testing.T, pod string) {
		want := Workload(pod)
		m := re.FindStringSubmatchIndex(pod)
		if m == nil {
			if pod != "" {
				t.Fatalf("regexp does not match %q", pod)
			}
			return
		}
		if got := string(re.ExpandString(nil, "$1$2$3", pod, m)); got != want {
			t.Fatalf("label_replace(%q) = %q, Workload = %q", pod, got, want)
		}
	})
}

func TestKey(t *testing.T) {
	if got := Key("ml", "web-7d4b9c8f6-x2k9q", "server"); got != "ml/web/server" {
		t.Errorf("Key = %q", got)
	}
}
