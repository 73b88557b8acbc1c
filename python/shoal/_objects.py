"""Team and Ctx: handles of libshoal teams and contexts."""
from . import _core


class Team:
    """A team of PEs. TEAM_WORLD and TEAM_SHARED exist from init on; splits
    return a Team on member PEs and None on the others."""

    def __init__(self, handle, name=None):
        self._handle = handle
        self._name = name

    def __repr__(self):
        return "<shoal.Team %s>" % (self._name or hex(self._handle or 0))

    def my_pe(self):
        return _core.team_my_pe(self)

    def n_pes(self):
        return _core.team_n_pes(self)

    def translate(self, pe, dest_team):
        """This team's PE number pe in dest_team (-1: not a member there)."""
        return _core.team_translate(self, pe, dest_team)

    def split_strided(self, start, stride, size):
        """Collective over this team: PEs start, start+stride, ... (size of them)."""
        h = _core.team_split_strided(self, start, stride, size)
        return None if h is None else Team(h)

    def split_2d(self, xrange):
        """Collective: (row team, column team) of a grid xrange PEs wide."""
        x, y = _core.team_split_2d(self, xrange)
        return (None if x is None else Team(x), None if y is None else Team(y))

    def sync(self):
        _core.team_sync(self)

    def destroy(self):
        if self._handle is not None:
            h, self._handle = self._handle, None
            try:
                _core.team_destroy(h)
            except Exception:
                self._handle = h
                raise

    def create_ctx(self, options=0):
        return Ctx(options, self)


class Ctx:
    """A communication context (shmem_ctx_create / shmem_team_create_ctx).
    Pass it as ctx= to put/get/atomics, or use its methods."""

    def __init__(self, options=0, team=None):
        self._handle = _core.ctx_create(options, team)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()

    def put(self, dest, source, pe):
        _core.put(dest, source, pe, self)

    def get(self, dest, source, pe):
        _core.get(dest, source, pe, self)

    def put_nbi(self, dest, source, pe):
        _core.put_nbi(dest, source, pe, self)

    def get_nbi(self, dest, source, pe):
        _core.get_nbi(dest, source, pe, self)

    def fence(self):
        _core.fence(self)

    def quiet(self):
        _core.quiet(self)

    def destroy(self):
        if self._handle is not None:
            h, self._handle = self._handle, None
            _core.ctx_destroy(h)
