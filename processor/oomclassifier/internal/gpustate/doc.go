// Package gpustate holds the types that describe a GPU's state and that both the metric
// window (internal/window) and the classifier (internal/classify) use: an allocation of the
// GPU to a pod's container and a driver Xid event. Each is defined once here, so the window
// hands them to the classifier as they are and the compiler keeps the two sides in step: a
// field added here reaches the rules without a copy to extend.
//
// It is a leaf: it imports only the standard library, and nothing of the processor's own.
// window and classify import it; it imports neither, nor parse.
package gpustate
