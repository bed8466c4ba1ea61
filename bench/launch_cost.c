/* launch_cost.c - what one launch of a near-empty kernel costs on an OpenCL
 * device, against the local memory its work-groups declare and their number:
 * each group of 256 reads one word, passes it through local memory and
 * writes it.  Prints, for each size, the median of 40 launches (after one
 * warm-up) of the device time (CL_PROFILING_COMMAND_START to END) and of the
 * host's wall time from the enqueue to the end of clFinish.
 *
 * It uses OpenCL alone (not the library), so that the cost it shows is the
 * platform's.  Build and run (the platform by part of its name, default
 * NVIDIA):
 *
 *   cc -O2 -o launch_cost bench/launch_cost.c -lOpenCL && ./launch_cost [PLATFORM]
 *
 * bench/RESULTS.md has its numbers on the H200 (the long rows' finish and
 * sample were suspected of paying for their 17.5 KB of local memory a group
 * at each launch; they do not). */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *src =
    "__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void\n"
    "k(__global const uint *in, __global uint *out)\n"
    "{\n"
    "    __local uint buf[LW];\n"
    "    uint l = get_local_id(0), g = get_group_id(0);\n"
    "    if (l == 0)\n"
    "        buf[(g * 7u) % LW] = in[g];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (l == 0)\n"
    "        out[g] = buf[(g * 7u) % LW];\n"
    "}\n";

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define CHECK(e, what)                                                                        \
    do {                                                                                      \
        cl_int e_ = (e);                                                                      \
        if (e_ != CL_SUCCESS) {                                                               \
            fprintf(stderr, "launch_cost: %s failed (%d)\n", what, (int)e_);                  \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

int main(int argc, char **argv)
{
    const char *want = argc > 1 ? argv[1] : "NVIDIA";
    cl_platform_id pl[16], p = NULL;
    cl_uint np = 0;
    CHECK(clGetPlatformIDs(16, pl, &np), "clGetPlatformIDs");
    for (cl_uint i = 0; i < np && !p; i++) {
        char n[256] = "";
        clGetPlatformInfo(pl[i], CL_PLATFORM_NAME, sizeof n, n, NULL);
        if (strstr(n, want))
            p = pl[i];
    }
    if (!p) {
        fprintf(stderr, "launch_cost: no platform named like '%s'\n", want);
        return 1;
    }
    cl_device_id d;
    CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL), "clGetDeviceIDs");
    char dn[256] = "";
    clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof dn, dn, NULL);
    cl_ulong lmax = 0;
    clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmax, &lmax, NULL);
    printf("device: %s (local memory %lu B)\n", dn, (unsigned long)lmax);
    cl_int e;
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    CHECK(e, "clCreateContext");
    cl_command_queue q = clCreateCommandQueue(c, d, CL_QUEUE_PROFILING_ENABLE, &e);
    CHECK(e, "clCreateCommandQueue");
    cl_mem in = clCreateBuffer(c, CL_MEM_READ_WRITE, 4096 * 4, NULL, &e);
    CHECK(e, "clCreateBuffer");
    cl_mem out = clCreateBuffer(c, CL_MEM_READ_WRITE, 4096 * 4, NULL, &e);
    CHECK(e, "clCreateBuffer");
    static const unsigned lbytes[] = {4, 2048, 4096, 8192, 12288, 17920, 24576, 32768, 45056};
    static const size_t groups[] = {132, 1024, 4096};
    for (size_t li = 0; li < sizeof lbytes / sizeof *lbytes; li++) {
        if (lbytes[li] > lmax)
            break;
        char opt[64];
        snprintf(opt, sizeof opt, "-D LW=%u", lbytes[li] / 4);
        cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
        CHECK(e, "clCreateProgramWithSource");
        CHECK(clBuildProgram(pr, 1, &d, opt, NULL, NULL), "clBuildProgram");
        cl_kernel k = clCreateKernel(pr, "k", &e);
        CHECK(e, "clCreateKernel");
        CHECK(clSetKernelArg(k, 0, sizeof in, &in), "clSetKernelArg");
        CHECK(clSetKernelArg(k, 1, sizeof out, &out), "clSetKernelArg");
        for (size_t gi = 0; gi < sizeof groups / sizeof *groups; gi++) {
            size_t gl = groups[gi] * 256, lo = 256;
            double t[41], w[41];
            for (int r = 0; r < 41; r++) {
                cl_event ev;
                struct timespec a, b;
                clock_gettime(CLOCK_MONOTONIC, &a);
                CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gl, &lo, 0, NULL, &ev),
                      "clEnqueueNDRangeKernel");
                CHECK(clFinish(q), "clFinish");
                clock_gettime(CLOCK_MONOTONIC, &b);
                cl_ulong s0 = 0, s1 = 0;
                clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s0, &s0, NULL);
                clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof s1, &s1, NULL);
                clReleaseEvent(ev);
                t[r] = (double)(s1 - s0) / 1e3;
                w[r] = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
            }
            qsort(t + 1, 40, sizeof *t, cmp);
            qsort(w + 1, 40, sizeof *w, cmp);
            printf("local %6u B  groups %5zu  device %7.2f us  wall %7.2f us\n", lbytes[li],
                   groups[gi], (t[20] + t[21]) / 2, (w[20] + w[21]) / 2);
        }
        clReleaseKernel(k);
        clReleaseProgram(pr);
    }
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseCommandQueue(q);
    clReleaseContext(c);
    return 0;
}
