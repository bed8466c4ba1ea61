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
typedef ulong key_t; /* an element's raw bits */
typedef ulong okey_t;
#define OKEY_SIGN ((ulong)0x8000000000000000UL)
#define OKEY_ONES ((ulong)0xFFFFFFFFFFFFFFFFUL)
#define OKEY_INF ((ulong)0x7FF0000000000000UL)
#elif KEY_BITS == 32
typedef uint key_t;
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
    /* branch-free (selects), so that a group's loads are not serialised by
     * branches on the loaded values */
    okey_t y = x == OKEY_SIGN ? (okey_t)0 : x;          /* -0 == +0 */
    u = y ^ ((y & OKEY_SIGN) ? OKEY_ONES : OKEY_SIGN);  /* negative: ~y; else y | sign */
    u = (x & ~OKEY_SIGN) > OKEY_INF ? OKEY_ONES : u;    /* every NaN: one value, above +inf */
#endif
    return u ^ (smallest ? OKEY_ONES : (okey_t)0);
}

/* whether order key u determines its element's bits: always but for a float's
 * zero (order_key drops the sign of -0) and NaN (one key for every payload) */
inline int okey_exact(okey_t u, uint smallest)
{
#if KEY_KIND == 2
    okey_t t = u ^ (smallest ? OKEY_ONES : (okey_t)0);
    return t != OKEY_SIGN && t != OKEY_ONES;
#else
    (void)u;
    (void)smallest;
    return 1;
#endif
}

/* the element's bits of order key u where okey_exact(u, smallest) */
inline okey_t okey_bits(okey_t u, uint smallest)
{
    okey_t t = u ^ (smallest ? OKEY_ONES : (okey_t)0);
#if KEY_KIND == 0
    return t;
#elif KEY_KIND == 1
    return t ^ OKEY_SIGN;
#else
    return t ^ ((t & OKEY_SIGN) ? OKEY_SIGN : OKEY_ONES);
#endif
}

/* all ones where j < n, else 0: a slot's order key masked to 0 past the end
 * of its data with no branch (written as `j < n ? order_key(x) : 0`, the
 * compiler put each slot's key, and on NVIDIA each slot's load, behind a
 * branch of its own: cl/rows_warp.cl) */
inline okey_t okey_live(uint j, uint n)
{
    return (okey_t)0 - (okey_t)(j < n);
}

/* comparator c of a bitonic stage at distance j: the lower element of its
 * pair (a 0 inserted at bit log2 j of c) */
inline uint lower_of(uint c, uint j)
{
    return ((c & ~(j - 1u)) << 1) | (c & (j - 1u));
}

/* (au, ai) comes before (bu, bi): larger key, then smaller index */
inline int pair_better(okey_t au, uint ai, okey_t bu, uint bi)
{
    return (au > bu) | ((au == bu) & (ai < bi));
}

#endif
