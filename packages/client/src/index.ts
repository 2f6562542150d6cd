export { deriveEndpoint, EndpointError, type PortalEndpoint } from './config/endpoints.ts';
