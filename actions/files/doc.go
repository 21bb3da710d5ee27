// Package files copies files to and from sandboxes (sandscope cp). Every
// copy goes through the exec Executor's identity check: the target is
// proven to be the sandbox's own Pod before anything is sent or read, and
// again after, and a copy that cannot be proven is refused with a
// *refusal.Error. Through kube exec a copy is a tar stream; through execd
// it is the daemon's files API. What comes back from a sandbox is hostile:
// Extract unpacks an archive under rules and limits into a directory that
// is renamed into place only once the copy is proven.
package files
