! A Fortran program calling the standard SGEMM, linked to tiledblas only.
! Each product is compared with a double-precision loop within
! 2 (K + 2) eps (|alpha| (|op(A)| |op(B)|)_ij + |beta| |C0_ij|); the padding
! row of C must stay bitwise untouched. Any mismatch ends with ERROR STOP.
program fortran_sgemm
  implicit none
  external :: sgemm

  ! lowercase transpose characters are valid too; 'C' means 'T' for real data
  call check('N', 'N', 70, 50, 40, 1.0, 0.0)
  call check('n', 't', 33, 65, 17, 0.5, 2.0)
  call check('T', 'c', 129, 31, 64, 1.0, -1.0)
  call check('C', 'N', 300, 200, 100, -0.7, 0.3)
  print '(a)', 'fortran_sgemm: all products OK'

contains

  logical function transposed(trans)
    character, intent(in) :: trans
    transposed = trans /= 'N' .and. trans /= 'n'
  end function transposed

  ! op(X)(i, j) for X stored as given
  double precision function op_element(x, trans, i, j)
    real, intent(in) :: x(:, :)
    character, intent(in) :: trans
    integer, intent(in) :: i, j
    if (transposed(trans)) then
      op_element = x(j, i)
    else
      op_element = x(i, j)
    end if
  end function op_element

  subroutine check(ta, tb, m, n, k, alpha, beta)
    character, intent(in) :: ta, tb
    integer, intent(in) :: m, n, k
    real, intent(in) :: alpha, beta
    real, allocatable :: a(:, :), b(:, :), c(:, :), c0(:, :)
    double precision :: total, abs_total, term, expected, bound
    integer :: i, j, p, bad

    ! stored shapes with a padding row each: op(A) is m x k, op(B) k x n
    if (transposed(ta)) then
      allocate (a(k + 1, m))
    else
      allocate (a(m + 1, k))
    end if
    if (transposed(tb)) then
      allocate (b(n + 1, k))
    else
      allocate (b(k + 1, n))
    end if
    allocate (c(m + 1, n), c0(m + 1, n))
    call random_number(a)
    call random_number(b)
    call random_number(c0)
    a = 2 * a - 1
    b = 2 * b - 1
    c0 = 2 * c0 - 1
    c = c0

    call sgemm(ta, tb, m, n, k, alpha, a, size(a, 1), b, size(b, 1), beta, c, size(c, 1))

    bad = 0
    do j = 1, n
      do i = 1, m
        total = 0
        abs_total = 0
        do p = 1, k
          term = op_element(a, ta, i, p) * op_element(b, tb, p, j)
          total = total + term
          abs_total = abs_total + abs(term)
        end do
        expected = alpha * total + beta * dble(c0(i, j))
        bound = 2 * (k + 2) * epsilon(1.0) * (abs(alpha) * abs_total + abs(beta) * abs(c0(i, j)))
        if (.not. (abs(c(i, j) - expected) <= bound)) bad = bad + 1
      end do
      if (transfer(c(m + 1, j), 0) /= transfer(c0(m + 1, j), 0)) bad = bad + 1
    end do

    print '(a, a1, a1, 3(1x, i0), a, i0, a)', 'fortran_sgemm: ', ta, tb, m, n, k, ': ', bad, ' mismatches'
    if (bad /= 0) error stop 'fortran_sgemm: MISMATCH'
  end subroutine check

end program fortran_sgemm
