// Package codec turns the API server's bytes into sandscope's model types:
// Pods from protobuf (a protobuf reader, the envelopes and watch frames
// around objects, the Pod mapping) and BatchSandboxes from JSON, each
// straight into the few fields the model keeps, with the RESTClients and
// list-watches that read them. Objects that arrive as objects (the demo's
// in-memory cluster, fake clients, a typed client's one-off read) are
// encoded as a server would send them and read by the same decoders
// (overwire.go), so one decoder serves every source.
//
// The decoders read hostile bytes; their tests hold them to client-go's
// generated decoders and the model's stock converters on random objects,
// and their fuzz targets to never panicking. kube is the only importer.
package codec
