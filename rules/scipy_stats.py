"""scipy.stats.norm, registered when a program has imported scipy.stats
(registry.OPTIONAL_MODULES): `norm.logpdf`, `pdf`, `cdf`, `logcdf` with `loc` and `scale`
(positional or keyword), broadcast together. With z = (x - loc) / scale:
d logpdf = (-z dx + z dloc + (z^2 - 1) dscale) / scale, d cdf = phi(z) (dx - dloc - z dscale) / scale.
A frozen distribution (`norm(loc, scale).logpdf(x)`) has no rule."""
import numpy as np
from scipy import stats

from adjoint_compiler import runtime as rt
from adjoint_compiler.aliasing import FRESH_FUNCTIONS
from adjoint_compiler.registry import adjoint, tangent

# results that share no memory with the arguments (the ufuncs' are known already)
FRESH_FUNCTIONS.update({stats.norm.logpdf, stats.norm.pdf, stats.norm.cdf, stats.norm.logcdf})


@adjoint(stats.norm.logpdf)
def norm_logpdf(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    x_bar += rt.unbroadcast(-y_bar * z / scale, x)
    loc_bar += rt.unbroadcast(y_bar * z / scale, loc)
    scale_bar += rt.unbroadcast(y_bar * (z * z - 1.0) / scale, scale)


@tangent(stats.norm.logpdf)
def norm_logpdf_dot(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    y_dot = (-z * x_dot + z * loc_dot + (z * z - 1.0) * scale_dot) / scale


@adjoint(stats.norm.pdf)
def norm_pdf(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    x_bar += rt.unbroadcast(-y_bar * y * z / scale, x)
    loc_bar += rt.unbroadcast(y_bar * y * z / scale, loc)
    scale_bar += rt.unbroadcast(y_bar * y * (z * z - 1.0) / scale, scale)


@tangent(stats.norm.pdf)
def norm_pdf_dot(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    y_dot = y * (-z * x_dot + z * loc_dot + (z * z - 1.0) * scale_dot) / scale


@adjoint(stats.norm.cdf)
def norm_cdf(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d = np.exp(-0.5 * z * z) / (np.sqrt(2.0 * np.pi) * scale)
    x_bar += rt.unbroadcast(y_bar * d, x)
    loc_bar += rt.unbroadcast(-y_bar * d, loc)
    scale_bar += rt.unbroadcast(-y_bar * d * z, scale)


@tangent(stats.norm.cdf)
def norm_cdf_dot(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d = np.exp(-0.5 * z * z) / (np.sqrt(2.0 * np.pi) * scale)
    y_dot = d * (x_dot - loc_dot - z * scale_dot)


@adjoint(stats.norm.logcdf)
def norm_logcdf(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d = np.exp(-0.5 * z * z - y) / (np.sqrt(2.0 * np.pi) * scale)
    x_bar += rt.unbroadcast(y_bar * d, x)
    loc_bar += rt.unbroadcast(-y_bar * d, loc)
    scale_bar += rt.unbroadcast(-y_bar * d * z, scale)


@tangent(stats.norm.logcdf)
def norm_logcdf_dot(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d = np.exp(-0.5 * z * z - y) / (np.sqrt(2.0 * np.pi) * scale)
    y_dot = d * (x_dot - loc_dot - z * scale_dot)
