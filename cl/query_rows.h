/* query_rows.h - a work-item's RT rows of a tile, the filter and the score
 * evaluated (cl/query.cl): included in a kernel body with QR_ROW(j) (the row
 * of tile position j, below n: every load unconditional) and QR_SET(r, j,
 * pass, key) (register slot r, tile position j: whether the row passes the
 * filter, and its order key) defined, and lid, smallest, the columns and
 * the programs in scope.  Tile position j = r * WG + lid, so that a group's
 * loads of one r are consecutive; r < QR_N (RT unless the includer says,
 * a multiple of QRB).  Specialised (QSPEC 1): a work-item takes its rows QRB
 * at a time (see cl/query.cl); where QR_LOADALL is defined and true (an
 * expression, uniform across the group) every column of a batch is read at
 * once (no second round trip for the score's columns where the filter
 * holds), else the score's columns only for the rows passing the filter (a
 * selective filter then leaves most of their sectors unread); else the
 * interpreter.  No include guard: included once per
 * kernel. */
#ifndef QR_N
#define QR_N RT
#endif
#if QSPEC
#pragma unroll
    for (uint r0 = 0; r0 < QR_N; r0 += QRB) {
        QXS_DECL;
        int pass[QRB];
#pragma unroll
        for (uint qb = 0; qb < QRB; qb++) {
            const ulong i = QR_ROW((r0 + qb) * WG + lid);
#ifdef QR_LOADALL
            if (QR_LOADALL) {
                QLOAD(QW_COLS | QO_COLS, i)
            } else {
                QLOAD(QW_COLS, i)
            }
#else
            QLOAD(QW_COLS, i)
#endif
        }
#pragma unroll
        for (uint qb = 0; qb < QRB; qb++) {
#if QW_N > 0
            QSLOTS;
#define QP QW_
#define QK wconsts
#include "query_steps.h"
#undef QK
#undef QP
            pass[qb] = v0 != 0;
#else
            pass[qb] = 1;
#endif
        }
#ifdef QR_LOADALL
        if (!(QR_LOADALL))
#endif
#pragma unroll
        for (uint qb = 0; qb < QRB; qb++) {
            const ulong i = QR_ROW((r0 + qb) * WG + lid);
            if (pass[qb]) {
                QLOAD(QO_COLS & ~QW_COLS, i)
            }
        }
#pragma unroll
        for (uint qb = 0; qb < QRB; qb++) {
            const uint j = (r0 + qb) * WG + lid;
            QSLOTS;
#define QP QO_
#define QK consts
#include "query_steps.h"
#undef QK
#undef QP
            QR_SET(r0 + qb, j, pass[qb], order_key((okey_t)v0, smallest));
        }
    }
#else
#pragma unroll
    for (uint r = 0; r < QR_N; r++) {
        const uint j = r * WG + lid;
        int pass = 0;
        const okey_t key = row_key(COLS_PASS, ops, nord, nwhere, consts, wconsts, QR_ROW(j),
                                   smallest, &pass);
        QR_SET(r, j, pass, key);
    }
#endif
#undef QR_N
