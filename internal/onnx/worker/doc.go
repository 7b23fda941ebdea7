// Package worker runs voice models in onnx-worker processes, warm children of the narrator
// binary, and is everything the server needs of them, without cgo: the models' signatures
// (Info), the protocol between server and worker (protocol.go), the worker's serve loop (Serve)
// and the server's Pool.
//
// A model runs in a worker, never in the server: onnxruntime is C++, and a crash, an abort, a
// hang or an allocation past the limit in it then kills one worker, which the Pool replaces,
// retrying its runs once, while the server and its other audios go on. The weights (330 MB for
// Kokoro fp32) stay out of the server's heap, in a process the kernel bounds (RLIMIT_AS,
// DefaultMemory) and the engines' sandbox confines: the Pool opens the model and the library
// read-only and passes them as descriptors 3 and 4, which the worker opens as /proc/self/fd/3
// and /proc/self/fd/4. A worker loads its model once and serves Config.Runs runs at once on its
// one copy, each with Config.Threads onnxruntime threads.
package worker
