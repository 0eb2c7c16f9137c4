package wire

// Op is a request type.
type Op uint8

const (
	OpPing Op = iota + 1
	OpPut
	OpGet
	OpHead
	OpDelete
	OpHas
	OpList
	OpUsage
	// One-sided ops (UCX): the payload is a memory descriptor, and the
	// server reads the frame from, or writes it into, the client's memory.
	OpPutRMA
	OpGetRMA
	// Streamed frames: parts by offset (arg), then the header commits them;
	// get-range answers bytes [arg, arg+n) with n an 8-byte payload.
	OpGetRange
	OpPutPart
	OpPutCommit
	OpPutAbort
	// Splice edits a stored frame (a row-range write): arg is the offset
	// of the replaced bytes, the payload SplicePayload's; the answer's arg
	// is 1 when the frame still had the old header and was edited.
	OpSplice
	// PutLayout announces a streamed frame's layout before its first part
	// (only to a server whose hello offers FlagLayout): arg is the payload
	// length, the payload a u32 header length. The server then receives
	// each part straight into the frame.
	OpPutLayout
	opMax
)

var opNames = [...]string{"?", "ping", "put", "get", "head", "delete", "has", "list", "usage", "put-rma", "get-rma", "get-range", "put-part", "put-commit", "put-abort", "splice", "put-layout", "?"}

func (op Op) String() string { return opNames[min(int(op), int(opMax))] }

// Valid reports whether op is a known request type.
func (op Op) Valid() bool { return op > 0 && op < opMax }

// IsUpload reports the streamed-write ops.
func (op Op) IsUpload() bool {
	return op == OpPutPart || op == OpPutCommit || op == OpPutAbort || op == OpPutLayout
}
