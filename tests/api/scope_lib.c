/*
 * A library that calls a forwarded LAPACK name, sroundup_lwork_, through its
 * PLT (position-independent, default visibility, no -Bsymbolic: the reference
 * can be interposed), as a BLAS library calls its own helpers. Built several
 * times for test_caller_scope: with SCOPE_VALUE, it also defines the name,
 * answering lwork + SCOPE_VALUE, so that the answer tells whose definition ran;
 * without, it only calls it.
 */
float sroundup_lwork_(const int *lwork);
float scope_call(int lwork);

#ifdef SCOPE_VALUE
float sroundup_lwork_(const int *lwork)
{
    return (float)*lwork + SCOPE_VALUE;
}
#endif

float scope_call(int lwork)
{
    return sroundup_lwork_(&lwork);
}
