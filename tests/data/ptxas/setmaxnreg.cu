/* setmaxnreg in a producer/consumer split (tests/test_ptxas_notices.c).
 * Without __launch_bounds__(threads, 1) ptxas cannot know the register
 * count at entry and ignores it: notice C7508, the gate setmaxnreg_ignored.
 * -DBOUNDED gives the bounds, and ptxas keeps the instruction. */
#ifdef BOUNDED
#define BOUNDS __launch_bounds__(256, 1)
#else
#define BOUNDS
#endif

extern "C" __global__ void BOUNDS fattn_fwd(float *o)
{
    if (threadIdx.x < 128)
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    else
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    o[threadIdx.x] = (float)threadIdx.x;
}
