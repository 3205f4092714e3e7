/* The native side of Crit.java: each function as JNI has it and as a critical native
   (JavaCritical_, called without the thread-state switch under -XX:+CriticalJNINatives). */
#include <jni.h>
#include <stdint.h>
static volatile int64_t word __attribute__((aligned(64)));
/* The bare call: a long in, a long out. */
JNIEXPORT jlong JNICALL Java_Crit_bare(JNIEnv *e, jclass c, jlong h) { return 42; }
JNIEXPORT jlong JNICALL JavaCritical_Crit_bare(jlong h) { return 42; }
/* The bare call plus one uncontended compare-and-swap, the core's one atomic step. */
JNIEXPORT jlong JNICALL Java_Crit_cas(JNIEnv *e, jclass c, jlong h) {
  int64_t cur = word; __atomic_compare_exchange_n(&word, &cur, cur + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return cur + 1; }
JNIEXPORT jlong JNICALL JavaCritical_Crit_cas(jlong h) {
  int64_t cur = word; __atomic_compare_exchange_n(&word, &cur, cur + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return cur + 1; }
