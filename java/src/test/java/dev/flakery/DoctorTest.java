package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Generator.Builder#doctorJson: the core's budgets report (docs/doctor.md) as JSON text. */
class DoctorTest {
    @Test
    void theReportIsTheCoresWithItsExitCode() {
        String json = Generator.builder().layout("baidu").workerId(3).doctorJson();
        assertTrue(json.startsWith("{\"status\":\"refused\",\"exit_code\":2,"), json);
        assertTrue(json.contains("\"time_runs_out\":\"2024-11-20T13:24:16.000Z\""), json);
        assertTrue(json.contains("\"worker_id\":3"), json);
    }

    @Test
    void aBadLayoutIsRefusedAsBuildRefusesIt() {
        FlakeryException e =
                assertThrows(FlakeryException.class, () -> Generator.builder().layout("time:99").doctorJson());
        assertEquals("invalid_layout", e.code());
    }
}
