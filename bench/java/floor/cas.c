/* Each figure: the minimum over 20,000 bursts of 2,000 ops, in TSC ticks per op and in ns at the
   TSC rate given as argv[1] in MHz (run.sh reads /proc/cpuinfo), so that preemption by other
   work on the machine does not count. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <x86intrin.h>
static volatile uint64_t word __attribute__((aligned(64)));
#define B 2000
#define R 20000
#define MEASURE(name, body) do { uint64_t best=~0ULL; \
  for(int r=0;r<R;r++){ uint64_t c0=__rdtscp(&aux); for(int i=0;i<B;i++){ body; } uint64_t c1=__rdtscp(&aux); if(c1-c0<best) best=c1-c0; } \
  printf("%-24s %6.2f tsc  %5.2f ns\n", name, (double)best/B, (double)best/B/ghz); } while(0)
static double ghz;
int main(int argc, char **argv){ unsigned aux;
  ghz = argc > 1 ? atof(argv[1]) / 1000 : 1;
  for(int k=0;k<2;k++){
  MEASURE("empty", __asm__ volatile("":::"memory"));
  MEASURE("load+add+store", word=word+1);
  MEASURE("load+lock cmpxchg", { uint64_t cur=word; __atomic_compare_exchange_n(&word,&cur,cur+1,0,__ATOMIC_SEQ_CST,__ATOMIC_SEQ_CST);} );
  MEASURE("lock cmpxchg (no load)", { uint64_t cur=i; __atomic_compare_exchange_n(&word,&cur,cur+1,0,__ATOMIC_SEQ_CST,__ATOMIC_SEQ_CST);} );
  MEASURE("lock xadd", __atomic_fetch_add(&word,1,__ATOMIC_SEQ_CST));
  MEASURE("xchg", __atomic_exchange_n(&word,i,__ATOMIC_SEQ_CST));
  MEASURE("mfence", __asm__ volatile("mfence":::"memory"));
  MEASURE("rdtsc", __rdtsc());
  }
}
