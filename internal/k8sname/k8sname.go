// Package k8sname derives a workload's identity from the name Kubernetes gave one of its pods,
// without asking the API server: the receiver, the processor and the shipped Prometheus rules
// must agree on it, and only the pod name travels with every point and record.
//
// Controllers name pods by appending generated segments to the owner's name (see
// k8s.io/apiserver's names.SimpleNameGenerator and the controllers in k8s.io/kubernetes):
//
//	Deployment   <deployment>-<pod-template-hash>-<5 random>   web-7d4b9c8f6-x2k9q
//	ReplicaSet, DaemonSet, Job   <owner>-<5 random>            trainer-x2k9q
//	CronJob      <cronjob>-<scheduled minutes>-<5 random>      nightly-29012345-x2k9q
//	StatefulSet  <statefulset>-<ordinal>                       db-0
//
// The random and hash segments use k8s.io/apimachinery's rand alphabet, which has no vowels
// and no 0, 1 or 3, so ordinary words are rarely taken for them. A bare pod keeps its name.
// The rule is a heuristic: a hand-named pod whose last segment happens to be five letters of
// that alphabet ("svc-bcdfg") loses that segment. PromQLWorkloadRegexp is the same rule for
// Prometheus' label_replace.
package k8sname

import "strings"

// alphabet is k8s.io/apimachinery/pkg/util/rand's: what generated name segments are made of.
const alphabet = "bcdfghjklmnpqrstvwxz2456789"

// PromQLWorkloadRegexp is Workload as a label_replace regexp over the pod name: its first
// group (or, for a StatefulSet ordinal, its second; or the whole name, its third) is the
// workload. label_replace anchors it at both ends. deploy/prometheus/alerts.yaml uses it
// verbatim; a test keeps the two in step.
const PromQLWorkloadRegexp = `(.+?)(?:-[` + alphabet + `]{6,10}|-[0-9]{8,})?-[` + alphabet + `]{5}|(.+)-[0-9]+|(.+)`

// Workload is the name of the workload that owns a pod: the pod name without the segments a
// controller generated. "" stays "".
func Workload(pod string) string {
	if rest, ok := cutSegment(pod, isRandom); ok {
		if owner, ok := cutSegment(rest, func(s string) bool { return isHash(s) || isSchedule(s) }); ok {
			return owner
		}
		return rest
	}
	if owner, ok := cutSegment(pod, isOrdinal); ok {
		return owner
	}
	return pod
}

// Key is a workload's identity across pods: namespace, owner and container, the grouping the
// recording rules use.
func Key(namespace, pod, container string) string {
	return namespace + "/" + Workload(pod) + "/" + container
}

// cutSegment removes the last "-segment" when keep accepts it and something is left before it.
func cutSegment(name string, keep func(string) bool) (string, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || !keep(name[i+1:]) {
		return name, false
	}
	return name[:i], true
}

func isRandom(s string) bool { return len(s) == 5 && inAlphabet(s) }

func isHash(s string) bool { return len(s) >= 6 && len(s) <= 10 && inAlphabet(s) }

// isSchedule is a CronJob's scheduled time in minutes since the epoch (8 digits until 2160).
func isSchedule(s string) bool { return len(s) >= 8 && allDigits(s) }

func isOrdinal(s string) bool { return len(s) > 0 && allDigits(s) }

func inAlphabet(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
