package flakery

// Code is one of the stable error codes of flakery, the same string in every binding.
type Code string

// The error codes. Each has a sentinel error below for errors.Is.
const (
	CodeInvalidLayout          Code = "invalid_layout"
	CodeInvalidArgument        Code = "invalid_argument"
	CodeTimeExhausted          Code = "time_exhausted"
	CodeClockMovedBackwards    Code = "clock_moved_backwards"
	CodeLeaseLost              Code = "lease_lost"
	CodeCoordinatorUnavailable Code = "coordinator_unavailable"
	CodeWorkerIDsExhausted     Code = "worker_ids_exhausted"
	CodeForked                 Code = "forked"
	// The codes of a Client (docs/client.md#errors): no server gave IDs within the call's
	// deadline; every server refused the token; every server answered something that is not
	// a batch of IDs; the TLS handshake with every https:// server failed (the message names
	// the cause: unknown CA, expired, wrong host name, client certificate refused).
	CodeServersUnavailable Code = "servers_unavailable"
	CodeUnauthorized       Code = "unauthorized"
	CodeBadAnswer          Code = "bad_answer"
	CodeTLSFailed          Code = "tls_failed"
	// CodePanic is a bug inside flakery, caught before it could cross into Go.
	CodePanic Code = "panic"
)

// Error is a failed call: its Code and the detailed message of the C library, which says
// what went wrong and what to configure.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "flakery: " + string(e.Code)
	}
	return "flakery: " + string(e.Code) + ": " + e.Message
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, flakery.ErrLeaseLost) holds for every lease_lost error whatever its message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinel errors, one per code, for errors.Is. They carry no message.
var (
	ErrInvalidLayout          error = &Error{Code: CodeInvalidLayout}
	ErrInvalidArgument        error = &Error{Code: CodeInvalidArgument}
	ErrTimeExhausted          error = &Error{Code: CodeTimeExhausted}
	ErrClockMovedBackwards    error = &Error{Code: CodeClockMovedBackwards}
	ErrLeaseLost              error = &Error{Code: CodeLeaseLost}
	ErrCoordinatorUnavailable error = &Error{Code: CodeCoordinatorUnavailable}
	ErrWorkerIDsExhausted     error = &Error{Code: CodeWorkerIDsExhausted}
	ErrForked                 error = &Error{Code: CodeForked}
	ErrServersUnavailable     error = &Error{Code: CodeServersUnavailable}
	ErrUnauthorized           error = &Error{Code: CodeUnauthorized}
	ErrBadAnswer              error = &Error{Code: CodeBadAnswer}
	ErrTLSFailed              error = &Error{Code: CodeTLSFailed}
	ErrPanic                  error = &Error{Code: CodePanic}
)

// invalidArgument is an error of this package's own, before any C call.
func invalidArgument(message string) error {
	return &Error{Code: CodeInvalidArgument, Message: message}
}
