/* common.cl - what every cltopk kernel shares: key width and kind, THE ORDER as an
 * order-preserving unsigned key, the sentinel, and the pair comparison.
 *
 * Specialised with -D options (defaults below, so the file compiles on its own):
 *   KEY_BITS  32 or 64: width of the element (only its bits are used: no fp64
 *             support is needed for float64 keys)
 *   KEY_KIND  0 unsigned, 1 signed, 2 IEEE float
 * The transform matches lib/order.h bit for bit. */
#ifndef CLTOPK_COMMON_CL
#define CLTOPK_COMMON_CL

#ifndef KEY_BITS
#define KEY_BITS 32
#endif
#ifndef KEY_KIND
#define KEY_KIND 2
#endif

#if KEY_BITS == 64
typedef ulong okey_t;
#define OKEY_SIGN ((ulong)0x8000000000000000UL)
#define OKEY_ONES ((ulong)0xFFFFFFFFFFFFFFFFUL)
#define OKEY_INF ((ulong)0x7FF0000000000000UL)
#elif KEY_BITS == 32
typedef uint okey_t;
#define OKEY_SIGN 0x80000000u
#define OKEY_ONES 0xFFFFFFFFu
#define OKEY_INF 0x7F800000u
#else
#error "KEY_BITS must be 32 or 64"
#endif

/* index of the sentinel: never a real position inside one launch */
#define SENTINEL_IDX 0xFFFFFFFFu

/* raw element bits -> key where larger means "comes first" */
inline okey_t order_key(okey_t x, uint smallest)
{
    okey_t u;
#if KEY_KIND == 0
    u = x;
#elif KEY_KIND == 1
    u = x ^ OKEY_SIGN;
#else
    if ((x & ~OKEY_SIGN) > OKEY_INF) {
        u = OKEY_ONES;                 /* every NaN: one value, above +inf */
    } else {
        if (x == OKEY_SIGN)
            x = 0;                     /* -0 == +0 */
        u = (x & OKEY_SIGN) ? ~x : (x | OKEY_SIGN);
    }
#endif
    return smallest ? ~u : u;
}

/* (au, ai) comes before (bu, bi): larger key, then smaller index */
inline int pair_better(okey_t au, uint ai, okey_t bu, uint bi)
{
    return au > bu || (au == bu && ai < bi);
}

#endif
