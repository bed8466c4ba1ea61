/* query_steps.h - the unrolled steps of one specialised program (cl/query.cl):
 * included where a program runs, with QP naming its options (QO_: the score,
 * QW_: the filter); step i runs when the program is longer than i.  Each
 * QSTEP(i) is one operation chosen by the options QP OPi (lib/querydev.c).
 * No include guard: included once per program. */
#if QCAT(QP, N) > 0
QSTEP(0)
#endif
#if QCAT(QP, N) > 1
QSTEP(1)
#endif
#if QCAT(QP, N) > 2
QSTEP(2)
#endif
#if QCAT(QP, N) > 3
QSTEP(3)
#endif
#if QCAT(QP, N) > 4
QSTEP(4)
#endif
#if QCAT(QP, N) > 5
QSTEP(5)
#endif
#if QCAT(QP, N) > 6
QSTEP(6)
#endif
#if QCAT(QP, N) > 7
QSTEP(7)
#endif
#if QCAT(QP, N) > 8
QSTEP(8)
#endif
#if QCAT(QP, N) > 9
QSTEP(9)
#endif
#if QCAT(QP, N) > 10
QSTEP(10)
#endif
#if QCAT(QP, N) > 11
QSTEP(11)
#endif
#if QCAT(QP, N) > 12
QSTEP(12)
#endif
#if QCAT(QP, N) > 13
QSTEP(13)
#endif
#if QCAT(QP, N) > 14
QSTEP(14)
#endif
#if QCAT(QP, N) > 15
QSTEP(15)
#endif
#if QCAT(QP, N) > 16
QSTEP(16)
#endif
#if QCAT(QP, N) > 17
QSTEP(17)
#endif
#if QCAT(QP, N) > 18
QSTEP(18)
#endif
#if QCAT(QP, N) > 19
QSTEP(19)
#endif
#if QCAT(QP, N) > 20
QSTEP(20)
#endif
#if QCAT(QP, N) > 21
QSTEP(21)
#endif
#if QCAT(QP, N) > 22
QSTEP(22)
#endif
#if QCAT(QP, N) > 23
QSTEP(23)
#endif
#if QCAT(QP, N) > 24
QSTEP(24)
#endif
#if QCAT(QP, N) > 25
QSTEP(25)
#endif
#if QCAT(QP, N) > 26
QSTEP(26)
#endif
#if QCAT(QP, N) > 27
QSTEP(27)
#endif
#if QCAT(QP, N) > 28
QSTEP(28)
#endif
#if QCAT(QP, N) > 29
QSTEP(29)
#endif
#if QCAT(QP, N) > 30
QSTEP(30)
#endif
#if QCAT(QP, N) > 31
QSTEP(31)
#endif
#if QCAT(QP, N) > 32
QSTEP(32)
#endif
#if QCAT(QP, N) > 33
QSTEP(33)
#endif
#if QCAT(QP, N) > 34
QSTEP(34)
#endif
#if QCAT(QP, N) > 35
QSTEP(35)
#endif
#if QCAT(QP, N) > 36
QSTEP(36)
#endif
#if QCAT(QP, N) > 37
QSTEP(37)
#endif
#if QCAT(QP, N) > 38
QSTEP(38)
#endif
#if QCAT(QP, N) > 39
QSTEP(39)
#endif
#if QCAT(QP, N) > 40
QSTEP(40)
#endif
#if QCAT(QP, N) > 41
QSTEP(41)
#endif
#if QCAT(QP, N) > 42
QSTEP(42)
#endif
#if QCAT(QP, N) > 43
QSTEP(43)
#endif
#if QCAT(QP, N) > 44
QSTEP(44)
#endif
#if QCAT(QP, N) > 45
QSTEP(45)
#endif
#if QCAT(QP, N) > 46
QSTEP(46)
#endif
#if QCAT(QP, N) > 47
QSTEP(47)
#endif
#if QCAT(QP, N) > 48
QSTEP(48)
#endif
#if QCAT(QP, N) > 49
QSTEP(49)
#endif
#if QCAT(QP, N) > 50
QSTEP(50)
#endif
#if QCAT(QP, N) > 51
QSTEP(51)
#endif
#if QCAT(QP, N) > 52
QSTEP(52)
#endif
#if QCAT(QP, N) > 53
QSTEP(53)
#endif
#if QCAT(QP, N) > 54
QSTEP(54)
#endif
#if QCAT(QP, N) > 55
QSTEP(55)
#endif
#if QCAT(QP, N) > 56
QSTEP(56)
#endif
#if QCAT(QP, N) > 57
QSTEP(57)
#endif
#if QCAT(QP, N) > 58
QSTEP(58)
#endif
#if QCAT(QP, N) > 59
QSTEP(59)
#endif
#if QCAT(QP, N) > 60
QSTEP(60)
#endif
#if QCAT(QP, N) > 61
QSTEP(61)
#endif
#if QCAT(QP, N) > 62
QSTEP(62)
#endif
#if QCAT(QP, N) > 63
QSTEP(63)
#endif
