package flakery

/*
#include <stdlib.h>
#include "flakery.h"
*/
import "C"

import "encoding/json"

// Doctor returns the budgets report of docs/doctor.md for the options (those left unset come
// from the FLAKERY_* environment, as for New) as decoded JSON: its "exit_code" is what
// `flakery doctor` would exit with (0 all well, 1 warnings, 2 a generator would be refused),
// its "findings" each carry a fix. No node ID lease is taken. The report is the core's; this
// only converts it.
func Doctor(o Options) (map[string]any, error) {
	var opts C.flakery_options
	var mem cMem
	defer mem.free()
	if err := o.fill(&opts, &mem); err != nil {
		return nil, err
	}
	var out *C.char
	if err := mem.call(func() C.flakery_status { return C.flakery_doctor_json(&opts, &out) }); err != nil {
		return nil, err
	}
	text := C.GoString(out)
	C.flakery_string_free(out)
	var report map[string]any
	if err := json.Unmarshal([]byte(text), &report); err != nil {
		return nil, err
	}
	return report, nil
}
